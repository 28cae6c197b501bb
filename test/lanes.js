// The test lanes, in one place. jest.config.js runs one lane when DURABLE_AGENT_LANE names it
// (npm run test:unit, test:core, test:soak, test:cluster) and every lane but the opt-in cluster
// when it is unset (npm test). test/unit/test-lanes.test.ts holds that every test file is in exactly
// one lane, so a new file that is in none fails there: add it to the lane docs/testing.md says.
//
// An entry ending in `/` is a folder (every *.test.ts under it); any other entry is one file.

/** Pure modules: no server, no bundle, no child process that waits on one. Under 30 s. */
const unit = ['test/unit/', 'test/cluster/compose.test.ts'];

/**
 * Every guarantee on a real server, each with its smallest test: approvals, exactly-once,
 * replay, decisions, forks, crash recovery at small sizes. Under 2 minutes from a fresh clone.
 */
const core = [
  'test/integration/agent-task.test.ts', // a task's turns, tools, refusals, local activities
  'test/integration/approvals.test.ts', // wait, approve, deny, edit, expiry, SIGKILL while waiting
  'test/integration/cancel.test.ts', // cancel reaches a running tool
  'test/integration/crash-core.test.ts', // SIGKILL after an idempotent write committed: retried with its key, one effect
  'test/integration/durable-decisions.test.ts', // decisions with no worker, across a server restart; forged, expired, superseded
  'test/integration/family-journal.test.ts', // exactly-once across forks and rewinds
  'test/integration/fork.test.ts', // forks, rewinds, idempotency keys carried to a branch
  'test/integration/guards.test.ts', // classified retries; a duplicate read answered, a duplicate write refused; budgets
  'test/integration/replay.test.ts', // every committed history replays
  'test/integration/archived-histories.test.ts', // the archived histories replay on the build that ran them, not on today's
  'test/integration/worker-crash.test.ts', // SIGTERM drains; a timed-out write is not retried
  'test/integration/versioned-by-default.test.ts', // a task is pinned to the build it started on; later builds wait for a promote
];

/** Everything else: many turns, real sizes, process kills at scale, the README tour, package install, browser. */
const soak = [
  'test/integration/agent-routing.test.ts',
  'test/integration/random-families.test.ts',
  'test/integration/random-families-postgres.test.ts',
  'test/integration/random-families-sigkill.test.ts', // issue 47: the four families found from outside and fixed random seeds, each write once without a person
  'test/integration/agents-module.test.ts',
  'test/integration/decision-binding.test.ts', // issue 51: an approval made for the old tool does not run a changed one; asked again with the difference
  'test/integration/recovery-bill.test.ts', // issue 49: what recovering cost a task (calls run again, time waited), and the recovery budget that asks a person
  'test/integration/agents-build.test.ts', // issue 51: a change to the agents module alone is a new build; v1 tasks finish on v1
  'test/integration/anthropic-model.test.ts',
  'test/integration/live-output.test.ts',
  'test/integration/live-output-postgres.test.ts',
  'test/integration/auto-permissions.test.ts', // auto mode: what the classifier sees, fail-closed verdicts, injection cases, SIGKILL, restart
  'test/integration/blob-store.test.ts',
  'test/integration/budgets-and-answers.test.ts',
  'test/integration/claim-check.test.ts',
  'test/integration/claude-strict.test.ts',
  'test/integration/graded-outcomes.test.ts',
  'test/integration/cli.test.ts',
  'test/integration/codec.test.ts',
  'test/integration/context-compaction.test.ts',
  'test/integration/continue-as-new-suggested.test.ts',
  'test/integration/cache-resumes.test.ts', // the prompt is byte-identical across a crash, a continue-as-new, a fork and a child's wake
  'test/integration/conversation-cache.test.ts',
  'test/integration/conversation-changes.test.ts',
  'test/integration/crash-matrix.test.ts',
  'test/integration/dead-workers.test.ts', // a SIGKILLed worker's calls failed by another at once; a frozen one's left to the heartbeat timeout
  'test/integration/credentials-concurrency.test.ts', // fifty tasks, one expiring OAuth credential: one refresh
  'test/integration/credentials.test.ts',
  'test/integration/custom-model.test.ts',
  'test/integration/deploy.test.ts',
  'test/integration/dev-server.test.ts',
  'test/integration/dev-beside-own-workers.test.ts', // issue 51: dev in its own deployment, your `worker --agents` beside it with no flag; the note names a build the server does not route to
  'test/integration/encryption-blobs.test.ts',
  'test/integration/encryption.test.ts',
  'test/integration/family-journal-postgres.test.ts',
  'test/integration/fast-reads.test.ts',
  'test/integration/forged-resume.test.ts',
  'test/integration/guard-properties.test.ts',
  'test/integration/hard-budgets.test.ts',
  'test/integration/hostile-input.test.ts',
  'test/integration/inbox-outage.test.ts',
  'test/integration/inbox-questions.test.ts',
  'test/integration/inbox.test.ts',
  'test/integration/json-output-verbs.test.ts',
  'test/integration/json-output.test.ts',
  'test/integration/large-history.test.ts',
  'test/integration/long-ids.test.ts',
  'test/integration/long-task-real-sizes.test.ts',
  'test/integration/long-task.test.ts',
  'test/integration/model-fallback.test.ts',
  'test/integration/mcp-server.test.ts',
  'test/integration/mcp-tools.test.ts',
  'test/integration/memory-crash.test.ts',
  'test/integration/memory-postgres.test.ts',
  'test/integration/memory.test.ts',
  'test/integration/model-errors.test.ts',
  'test/integration/needle-300.test.ts',
  'test/integration/no-worker-no-server.test.ts',
  'test/integration/package-install.test.ts',
  'test/integration/plugin.test.ts',
  'test/integration/purge.test.ts',
  'test/integration/query-during-local-call.test.ts',
  'test/integration/readme-tour.test.ts',
  'test/integration/recording-self-contained.test.ts',
  'test/integration/reliability-slice.test.ts', // two tasks of the reliability benchmark on two engines, clean, killed, decided while down
  'test/integration/sandbox-boundary.test.ts',
  'test/integration/schedules.test.ts',
  'test/integration/shared-store-crash.test.ts',
  'test/integration/signed-inputs.test.ts',
  'test/integration/status-truth.test.ts',
  'test/integration/steering.test.ts',
  'test/integration/subagents-crash.test.ts',
  'test/integration/subagents.test.ts',
  'test/integration/task-replay.test.ts',
  'test/integration/tracing.test.ts',
  'test/integration/turn-promises.test.ts',
  'test/integration/upgrade-at-continue-as-new.test.ts',
  'test/integration/verified-approvers.test.ts',
  'test/integration/workflow-bundle.test.ts',
  'test/integration/vault-postgres.test.ts',
];

/** Opt-in: needs `npm run cluster` first; not part of npm test. */
const cluster = ['test/cluster/cluster.test.ts'];

const lanes = { unit, core, soak, cluster };

/** The lanes npm test runs (all but the opt-in cluster). */
const defaultLanes = ['unit', 'core', 'soak'];

/** Jest testMatch globs for a lane's entries. */
function testMatchOf(names) {
  return names.flatMap((name) => lanes[name].map((entry) => `<rootDir>/${entry}${entry.endsWith('/') ? '**/*.test.ts' : ''}`));
}

/** The lanes whose entries take `file` (a path relative to the repository root, with `/`). */
function lanesOf(file) {
  return Object.keys(lanes).filter((name) => lanes[name].some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry)));
}

module.exports = { lanes, defaultLanes, testMatchOf, lanesOf };
