/** Every error the project throws on purpose is a DurableAgentError whose code a caller can branch on. */
import { DurableAgentError } from '../../src/errors/durable-agent-error';
import { HttpStatusError, ToolFailure } from '../../src/errors/tool-failure';
import { classify } from '../../src/errors/classify';
import { EncryptionKeyError } from '../../src/codec/encryption-keys';
import { EncryptionKeyNotFoundError, PayloadDecryptionError } from '../../src/codec/encryption-codec';
import { PayloadDecompressionError } from '../../src/codec/compression-codec';
import { CliError } from '../../src/cli/cli-error';
import { UnverifiedApproversError } from '../../src/approvers/keys';
import { BlobMissingError, BlobTamperedError } from '../../src/blobs/blob-store';
import { BlobDecryptionError, BlobKeyNotFoundError } from '../../src/blobs/blob-envelope';
import { NeedsInputError } from '../../src/tools/needs-input';
import { InvalidJsonSchemaError } from '../../src/tools/json-schema';
import { StoredArgumentsError } from '../../src/client/approval-arguments';
import { TaskIdRefusedError, TaskNotFoundError, TaskRejectedError } from '../../src/client/task-client';
import { ApproverFileError } from '../../src/inbox/approver-directory';
import { McpUnavailableError } from '../../src/mcp/errors';
import { HttpError } from '../../src/net/http-error';
import { DemoSettingsError } from '../../src/demo/demo-environment';
import { ModelCallAborted } from '../../src/models/model';
import { ForkPointError } from '../../src/forks/fork-point';
import { BadConversationChangeError } from '../../src/activities/conversation-copies';
import { RecordingError } from '../../src/replay/recording';
import { ReplayCannotRunError, ReplayModelError } from '../../src/replay/run-replay';
import { ForkRefusedError } from '../../src/client/task-client';
import { ForkBuildRefusedError } from '../../src/client/fork-build';
import { DevServerPortTakenError } from '../../src/server/dev-server';
import { BranchRefusedError } from '../../src/client/branch-policy';
import { ScheduleNotFound, ScheduleProblem } from '../../src/client/task-schedules';
import { RuleError } from '../../src/testing/messages-api-rules';
import { UsageProblem } from '../../src/mcp-server/task-tools-server';
import { DeployRefused } from '../../src/deploy/deployment';
import { BuildAgentsMismatch } from '../../src/worker/build-agents';
import { CredentialUnavailableError } from '../../src/vault/credentials';
import { VaultConfigError, VaultConflictError, VaultUnreadableError } from '../../src/vault/vault-store';
import { NetworkRecordsFolderError } from '../../src/worker/dead-workers/folder-filesystem';
import { toolError } from '../../src/protocol/tool-error';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const errors: DurableAgentError[] = [
  new ToolFailure('permanent', 'not_found', 'gone'),
  new HttpStatusError(503, 'busy'),
  new EncryptionKeyError('bad key'),
  new EncryptionKeyNotFoundError('k2', ['k1']),
  new PayloadDecryptionError('bad payload'),
  new PayloadDecompressionError('bad gzip'),
  new CliError('bad flag'),
  new UnverifiedApproversError('no keys'),
  new BlobMissingError('task/run', 'sha256:' + '0'.repeat(64), 'a folder'),
  new BlobTamperedError('task/run', 'sha256:' + '0'.repeat(64), 'a folder', 'swapped'),
  new BlobKeyNotFoundError('task/run', 'sha256:' + '0'.repeat(64), 'k2', []),
  new BlobDecryptionError('bad blob'),
  new NeedsInputError({ server: 'srv', message: 'which?', requestedSchema: { type: 'object', properties: {} }, index: 0 }),
  new InvalidJsonSchemaError('not a schema'),
  new StoredArgumentsError('unreadable'),
  new TaskRejectedError('t', 'refused'),
  new TaskNotFoundError('t'),
  new TaskIdRefusedError('t', 'too long'),
  new ApproverFileError('bad file'),
  new McpUnavailableError('srv', 'down'),
  new HttpError(404, 'nothing here', { title: 'Not found' }),
  new DemoSettingsError('unknown fault'),
  new ModelCallAborted('claude-sonnet-4-5', { inputTokens: 10, outputTokens: 0 }, false),
  new ForkPointError('fork_turn_not_found', 'no turn 7'),
  new BadConversationChangeError('no such call'),
  new RecordingError('edited'),
  new ReplayModelError('unreachable'),
  new ReplayCannotRunError('no script here'),
  new ForkRefusedError('fork_turn_not_found', 'no turn 7'),
  new ForkBuildRefusedError('no live worker of build b'),
  new DevServerPortTakenError('address already in use'),
  new BranchRefusedError('t', 'fork', 'sam may not fork t'),
  new ScheduleProblem('bad spec'),
  new ScheduleNotFound('nightly'),
  new RuleError('anthropic-version: header is required'),
  new UsageProblem('no task id'),
  new DeployRefused('no passing check'),
  new BuildAgentsMismatch('build v7 already serves other agents on queue q'),
  new VaultConfigError('bad vault setting'),
  new VaultConflictError('oauth', 1, 2),
  new VaultUnreadableError('altered'),
  new CredentialUnavailableError(toolError('resource', 'credential_revoked', 'revoked')),
  new NetworkRecordsFolderError('records folder on nfs'),
];

/** Every `class X extends Y` in src/, by file: read as text, so a new error class cannot be missed by this list. */
function declaredClasses(): { file: string; name: string; base: string }[] {
  const src = path.join(__dirname, '../../src');
  const found: { file: string; name: string; base: string }[] = [];
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    for (const m of readFileSync(file, 'utf8').matchAll(/class (\w+) extends (\w+)/g)) found.push({ file: path.relative(src, file), name: m[1]!, base: m[2]! });
  }
  return found;
}

test('one error base: no class in src extends Error but DurableAgentError, and every class that extends an error is in the list above', () => {
  const classes = declaredClasses();
  const errorNames = new Set<string>(['DurableAgentError']);
  // Bases first: a class whose base is an error class is one too, at any depth.
  for (let grew = true; grew; ) {
    grew = false;
    for (const c of classes) if (errorNames.has(c.base) && !errorNames.has(c.name)) grew = errorNames.add(c.name) !== undefined;
  }
  expect(classes.filter((c) => c.base === 'Error' && c.name !== 'DurableAgentError').map((c) => `${c.file}: ${c.name}`)).toEqual([]);
  errorNames.delete('DurableAgentError');
  expect([...errorNames].sort()).toEqual(errors.map((e) => e.name).sort());
});

test.each(errors.map((e) => [e.name, e] as const))('%s is a DurableAgentError with a snake_case code and its own name', (name, err) => {
  expect(err).toBeInstanceOf(DurableAgentError);
  expect(err).toBeInstanceOf(Error);
  expect(err.code).toMatch(/^[a-z][a-z0-9_]*$/);
  expect(name).toBe(err.constructor.name);
});

test('every exported error class names its instances after itself, set once by the base', () => {
  const src = path.join(__dirname, '../../src');
  const files = [...new Set(declaredClasses().map((c) => c.file))].filter((f) => !f.startsWith('workflows/'));
  const classes: (abstract new (...args: never[]) => DurableAgentError)[] = [];
  for (const file of files) {
    const exported = require(path.join(src, file)) as Record<string, unknown>;
    for (const value of Object.values(exported)) {
      if (typeof value === 'function' && value.prototype instanceof DurableAgentError) classes.push(value as (typeof classes)[number]);
    }
  }
  expect(classes.length).toBe(errors.length);
  for (const C of classes) {
    const instance = errors.find((e) => e.constructor === C);
    expect(instance?.name).toBe(C.name);
    expect(String(instance)).toMatch(new RegExp(`^${C.name}: `));
  }
  // A class that writes nothing about its name gets its own, not its base's.
  class LocalProblem extends DurableAgentError {
    readonly code = 'local_problem';
  }
  class NarrowerProblem extends LocalProblem {}
  expect(new LocalProblem('x').name).toBe('LocalProblem');
  expect(new NarrowerProblem('y', { cause: 'z' })).toMatchObject({ name: 'NarrowerProblem', message: 'y', cause: 'z' });
  expect(new NarrowerProblem('y').stack?.split('\n')[0]).toBe('NarrowerProblem: y');
});

test('codes name the failure, and an HTTP status reads the same in the error and in its classification', () => {
  expect(new BlobMissingError('s', 'sha256:' + '0'.repeat(64), 'f').code).toBe('blob_missing');
  expect(new HttpError(413, 'too big').code).toBe('http_413');
  const status = new HttpStatusError(503, 'busy');
  expect(classify(status).error.code).toBe(status.code);
  // A project code is never read as a Node code (ENOENT-style): classification still goes by the class.
  expect(classify(new ToolFailure('permanent', 'not_found', 'gone')).error).toMatchObject({ error_class: 'permanent', code: 'not_found' });
});
