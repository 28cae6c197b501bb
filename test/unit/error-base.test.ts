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
];

test.each(errors.map((e) => [e.name, e] as const))('%s is a DurableAgentError with a snake_case code and its own name', (name, err) => {
  expect(err).toBeInstanceOf(DurableAgentError);
  expect(err).toBeInstanceOf(Error);
  expect(err.code).toMatch(/^[a-z][a-z0-9_]*$/);
  expect(name).toBe(err.constructor.name);
});

test('codes name the failure, and an HTTP status reads the same in the error and in its classification', () => {
  expect(new BlobMissingError('s', 'sha256:' + '0'.repeat(64), 'f').code).toBe('blob_missing');
  expect(new HttpError(413, 'too big').code).toBe('http_413');
  const status = new HttpStatusError(503, 'busy');
  expect(classify(status).error.code).toBe(status.code);
  // A project code is never read as a Node code (ENOENT-style): classification still goes by the class.
  expect(classify(new ToolFailure('permanent', 'not_found', 'gone')).error).toMatchObject({ error_class: 'permanent', code: 'not_found' });
});
