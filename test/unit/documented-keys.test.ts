/** The documentation states one idempotency key shape, the one the workflow issues. */
import { documentedKeyShapes, keyPattern } from '../support/documented-key';

test('README step 8 and docs/architecture.md give the same key shape: <taskId>:<firstRunId>:<n>', () => {
  const shapes = documentedKeyShapes();
  expect(shapes.map((s) => s.where)).toEqual(['README.md', 'docs/architecture.md', 'docs/architecture.md']);
  expect(shapes.map((s) => s.shape)).toEqual(shapes.map(() => '<taskId>:<firstRunId>:<n>'));
});

test('the documented shape accepts a key the workflow issues and refuses the old <taskId>:<toolUseId> form', () => {
  const pattern = keyPattern(documentedKeyShapes()[0]!.shape, 'crash-idem-1a2b3c4d');
  expect('crash-idem-1a2b3c4d:0b5e8c1a-3f2d-4c7b-9a1e-2d3c4b5a6f70:3').toMatch(pattern);
  expect('crash-idem-1a2b3c4d:toolu_01').not.toMatch(pattern);
  expect('other-task:0b5e8c1a-3f2d-4c7b-9a1e-2d3c4b5a6f70:3').not.toMatch(pattern);
  expect(() => keyPattern('<taskId>:<toolUseId>', 't')).toThrow(/has a part no key has: <toolUseId>/);
});
