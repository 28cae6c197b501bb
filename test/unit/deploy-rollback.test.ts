/** What `deploy rollback` makes current, from the deployment as `deploy status` reads it. */
import { type BuildView, type DeploymentView, rollbackTarget } from '../../src/deploy/deployment';

const build = (buildId: string, createdAt: string, extra: Partial<BuildView> = {}): BuildView => ({ buildId, state: 'draining', createdAt, openTasks: 0, agents: {}, ...extra });
const view = (current: string, builds: BuildView[]): DeploymentView => ({ deploymentName: 'd', current, builds, unversionedOpenTasks: 0 });

test('after a promote of v2, rollback makes v1 (older, deactivated last) current', () => {
  const v1 = build('v1', '2026-01-01T00:00:00Z', { deactivatedAt: '2026-01-02T00:00:00Z' });
  const v2 = build('v2', '2026-01-01T12:00:00Z', { state: 'current' });
  expect(rollbackTarget(view('v2', [v1, v2]))).toEqual({ build: v1 });
});

test('a second rollback is refused: the previous build is the one the first backed out', () => {
  const v1 = build('v1', '2026-01-01T00:00:00Z', { state: 'current', deactivatedAt: '2026-01-02T00:00:00Z' });
  const v2 = build('v2', '2026-01-01T12:00:00Z', { deactivatedAt: '2026-01-03T00:00:00Z' });
  expect(rollbackTarget(view('v1', [v1, v2]))).toEqual({
    problem:
      'Deployment "d" has nothing older to roll back to: the previous build v2 is newer than the current v1 (the one a rollback backed out); make a build current by name with durable-agent deploy promote BUILD',
  });
});

test('a deployment with one build has nothing to roll back to', () => {
  expect(rollbackTarget(view('v1', [build('v1', '2026-01-01T00:00:00Z', { state: 'current' })]))).toEqual({
    problem: 'Deployment "d" has no previous build to roll back to (current: v1)',
  });
});
