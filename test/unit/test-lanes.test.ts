/** The test lanes (test/lanes.js): every test file is in exactly one, and the npm scripts run them. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const { lanes, defaultLanes, lanesOf } = require('../lanes') as {
  lanes: Record<string, string[]>;
  defaultLanes: string[];
  lanesOf(file: string): string[];
};

const testFiles = readdirSync(path.join(root, 'test'), { recursive: true, encoding: 'utf8' })
  .map((file) => `test/${file.split(path.sep).join('/')}`)
  .filter((file) => file.endsWith('.test.ts'))
  .sort();

test('every test file belongs to exactly one lane (a new file goes in the lane docs/testing.md names)', () => {
  expect(testFiles.length).toBeGreaterThan(100);
  const wrong = testFiles.map((file) => ({ file, lanes: lanesOf(file) })).filter((f) => f.lanes.length !== 1);
  expect(wrong).toEqual([]);
});

test('every lane entry names a file or folder that exists, and each file is named once', () => {
  const entries = Object.values(lanes).flat();
  expect(entries.filter((entry) => !existsSync(path.join(root, entry)))).toEqual([]);
  expect(entries.filter((entry, i) => entries.indexOf(entry) !== i)).toEqual([]);
});

test('npm test runs the unit, core and soak lanes together (each file once); each lane has its script', () => {
  const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  expect(defaultLanes).toEqual(['unit', 'core', 'soak']);
  expect(scripts.test).toMatch(/&& jest$/);
  expect(scripts.test).not.toContain('DURABLE_AGENT_LANE');
  for (const lane of Object.keys(lanes)) expect(scripts[`test:${lane}`]).toBe(`DURABLE_AGENT_LANE=${lane} jest`);
});

test('the unit lane starts no server: its files call neither the harness nor the dev server', () => {
  const serverSupport = /\b(useHarness|startHarness|startDevServer)\(/;
  const unitFiles = testFiles.filter((file) => lanesOf(file)[0] === 'unit');
  expect(unitFiles.filter((file) => serverSupport.test(readFileSync(path.join(root, file), 'utf8')))).toEqual([]);
});
