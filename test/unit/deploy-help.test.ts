/** `deploy --help` says what the worker does: versioned by default (docs/deploy.md), and what rollback refuses. */
import { deployHelp } from '../../src/cli/commands/deploy';
import { versioningFromEnvironment } from '../../src/worker/versioning';

test('deploy --help says versioning is on by default, as the worker does, and --versioned changes nothing', () => {
  expect(versioningFromEnvironment({})).toBe(true);
  expect(deployHelp).toMatch(/on by default/);
  expect(deployHelp).not.toMatch(/workers started with --versioned or --build-id/);
  expect(deployHelp).toMatch(/--unversioned/);
});

test('deploy --help says a second rollback is refused rather than re-promoting the build it backed out', () => {
  expect(deployHelp).toMatch(/second\s+rollback does not re-promote it/);
});
