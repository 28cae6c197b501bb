/**
 * Encryption end to end on a real dev server: a task whose prompt, tool arguments, tool results, a
 * failing tool's message and the workflow's own failure carry secrets runs with encryption on
 * (compression too); the raw history, read with no codec, holds none of them anywhere; the codec
 * server decodes its payloads over HTTP for the holder of the token; the `temporal` CLI reads them
 * through it; and histories replay with the keys, encrypted or not.
 */
import { committedHistories } from '../support/committed-histories';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { decode } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { TaskClient } from '../../src/client/task-client';
import { LOCAL_ACTIVITY_MARKER } from '../../src/history/task-history';
import { createPayloadCodecs, ENCODED_FAILURE_CONVERTER_PATH, ENCRYPTED_ENCODING, GZIP_ENCODING, KEY_ID_METADATA, createDataConverter, type CodecOptions } from '../../src/codec';
import { startCodecServer, type RunningCodecServer } from '../../src/codec/codec-server';
import { freePort } from '../../src/server/dev-server';
import { provisionTemporalCli } from '../../src/server/temporal-cli';
import { cachedWorkflowBundle } from '../../src/worker/workflow-bundle';
import { answer, callTool, startHarness, type Harness } from '../support/harness';
import { runCli, sigkill, spawnCli, waitFor } from '../support/processes';

jest.setTimeout(240_000);

const run = promisify(execFile);
const tag = randomBytes(4).toString('hex');
const SECRETS = {
  prompt: `PROMPT-SECRET-${tag}`,
  argument: `ARG-SECRET-${tag}`,
  result: `RESULT-SECRET-${tag}`,
  toolFailure: `TOOLFAIL-SECRET-${tag}`,
  workflowFailure: `WFFAIL-SECRET-${tag}`,
};
const TOKEN = `token-${randomBytes(8).toString('hex')}`;
const codec: CodecOptions = {
  // Low, so the tool result (and the conversation) is compressed before it is encrypted.
  compression: { thresholdBytes: 256 },
  encryption: {
    keys: [
      { id: 'it-new', key: randomBytes(32) },
      { id: 'it-old', key: randomBytes(32) },
    ],
  },
  env: {},
};
const codecs = createPayloadCodecs(codec);

let h: Harness;
let taskId: string;
let raw: temporal.api.history.v1.IHistory;
let codecServer: RunningCodecServer;

interface Found {
  where: string;
  payload: Payload;
}

/** Every payload in the history with where it sits; search attributes and headers are left to the server by design. */
function payloadsOf(history: temporal.api.history.v1.IHistory): Found[] {
  const out: Found[] = [];
  const walk = (node: unknown, where: string) => {
    if (!node || typeof node !== 'object') return;
    const maybe = node as Payload;
    if (maybe.metadata && maybe.metadata.encoding instanceof Uint8Array) {
      out.push({ where, payload: maybe });
      return;
    }
    const localActivityMarker = (node as { markerName?: string }).markerName === LOCAL_ACTIVITY_MARKER;
    for (const [key, value] of Object.entries(node)) {
      // The SDK's patch markers (`patched()`) hold the patch's name only, written by its core unencoded.
      if (key === 'searchAttributes' || key === 'header' || key === 'patch-data') continue;
      // A local activity's marker: its core writes the bookkeeping (`data`) unencoded; the result
      // (`result`) is the activity's, encoded like every other payload. localActivityBookkeeping checks `data`.
      if (localActivityMarker && key === 'details') {
        const { data: _bookkeeping, ...rest } = value as Record<string, unknown>;
        walk(rest, `${where}.${key}`);
        continue;
      }
      walk(value, `${where}.${key}`);
    }
  };
  for (const e of history.events ?? []) walk(e, `event ${e.eventId}`);
  return out;
}

/** The unencoded bookkeeping of each local activity marker, parsed. */
function localActivityBookkeeping(history: temporal.api.history.v1.IHistory): Record<string, unknown>[] {
  return (history.events ?? [])
    .map((e) => e.markerRecordedEventAttributes)
    .filter((m) => m?.markerName === LOCAL_ACTIVITY_MARKER)
    .map((m) => JSON.parse(Buffer.from(m!.details!.data!.payloads![0]!.data!).toString('utf8')) as Record<string, unknown>);
}

/** Every failure (with its causes) in the history. */
function failuresOf(history: temporal.api.history.v1.IHistory): { where: string; failure: temporal.api.failure.v1.IFailure }[] {
  const out: { where: string; failure: temporal.api.failure.v1.IFailure }[] = [];
  const walk = (node: unknown, where: string) => {
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'failure' || key === 'cause') && value && typeof value === 'object' && 'message' in value) {
        out.push({ where: `${where}.${key}`, failure: value as temporal.api.failure.v1.IFailure });
      }
      walk(value, `${where}.${key}`);
    }
  };
  for (const e of history.events ?? []) walk(e, `event ${e.eventId}`);
  return out;
}

const text = (b?: Uint8Array | null) => Buffer.from(b ?? new Uint8Array()).toString('utf8');
const jsonOf = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

beforeAll(async () => {
  h = await startHarness();
  // The script's file name reaches the workflow's own failure message when the script runs out.
  const script = path.join(h.tmpDir, `script-${SECRETS.workflowFailure}.json`);
  writeFileSync(
    script,
    JSON.stringify({
      description: 'encryption test',
      turns: [callTool('read_file', { path: `vault-${SECRETS.argument}.txt` }), callTool('read_file', { path: `missing-${SECRETS.toolFailure}.txt` })],
    }),
  );
  // Between the compression threshold and the claim check's inline limit: the result stays in history.
  writeFileSync(path.join(h.workspaceDir, `vault-${SECRETS.argument}.txt`), `${`${SECRETS.result} `.repeat(40)}\n`);

  taskId = h.taskId('encrypted');
  const client = await TaskClient.connect({ address: h.server.address, taskQueue: h.taskQueue, codec });
  // The bundle workers build for themselves when encryption is on: the workflow's failures are encoded too.
  const workflowBundle = await cachedWorkflowBundle(undefined, { failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH });
  const worker = await h.worker(undefined, { codec, workflowBundle });
  try {
    const failure = await worker.runUntil(async () => {
      await client.start({ agent: 'demo', prompt: `Look in the vault. ${SECRETS.prompt}`, model: { provider: 'scripted', script } }, { taskId });
      return client.result(taskId).then(
        () => undefined,
        (err: Error) => err,
      );
    });
    // The client with the keys reads the real failure message back.
    expect(String((failure as { cause?: Error } | undefined)?.cause?.message ?? failure?.message)).toContain(SECRETS.workflowFailure);
  } finally {
    await client.client.connection.close();
  }

  const plainConnection = await Connection.connect({ address: h.server.address });
  try {
    raw = await new Client({ connection: plainConnection }).workflow.getHandle(taskId).fetchHistory();
  } finally {
    await plainConnection.close();
  }
  codecServer = await startCodecServer({ codecs, token: TOKEN });
});

afterAll(async () => {
  await codecServer?.close();
  await h?.close();
});

test('the raw history holds none of the secrets: not the prompt, the tool arguments and results, nor any failure message', () => {
  const bytes = Buffer.from(temporal.api.history.v1.History.encode(raw).finish());
  expect(bytes.length).toBeGreaterThan(1000);
  for (const [what, secret] of Object.entries(SECRETS)) expect({ what, found: bytes.includes(secret) }).toEqual({ what, found: false });
  // The task part of each secret, in case a field stored it differently.
  expect(bytes.includes(tag)).toBe(false);
});

test('every payload in the raw history is encrypted under the current key; the large ones are compressed inside', async () => {
  const found = payloadsOf(raw);
  expect(found.length).toBeGreaterThan(10);
  for (const { where, payload } of found) {
    expect({ where, encoding: text(payload.metadata!.encoding), key: text(payload.metadata![KEY_ID_METADATA]) }).toEqual({ where, encoding: ENCRYPTED_ENCODING, key: 'it-new' });
  }
  // describeAgent and fast reads ran locally; their markers' unencoded part is the SDK's bookkeeping,
  // nothing of the task (the manifest and the tools' results are in `result`, encrypted above).
  const bookkeeping = localActivityBookkeeping(raw);
  expect(bookkeeping.map((entry) => entry.activity_type)).toContain('describeAgent');
  expect(bookkeeping.map((entry) => entry.activity_type)).toContain('runTool');
  for (const entry of bookkeeping) {
    expect(Object.keys(entry).every((k) => ['seq', 'attempt', 'activity_id', 'activity_type', 'complete_time', 'backoff', 'original_schedule_time'].includes(k))).toBe(true);
    expect(['describeAgent', 'runTool']).toContain(entry.activity_type);
  }
  // One layer off (decryption only): compression ran first, so some payloads are gzip inside.
  const inner = await codecs[1]!.decode(found.map((f) => f.payload));
  expect(inner.some((p) => text(p.metadata!.encoding) === GZIP_ENCODING)).toBe(true);
});

test('every failure in the raw history says only "Encoded failure"; with the keys the tool and workflow failures read in full', async () => {
  const failures = failuresOf(raw);
  const events = (raw.events ?? []).map((e) => e.eventType);
  expect(events).toContain(temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED);
  expect(events).toContain(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED);
  expect(failures.length).toBeGreaterThanOrEqual(2);
  const decodedMessages: string[] = [];
  for (const { where, failure } of failures) {
    expect({ where, message: failure.message, stackTrace: failure.stackTrace ?? '' }).toEqual({ where, message: 'Encoded failure', stackTrace: '' });
    const [attrs] = await decode(codecs, [failure.encodedAttributes as Payload]);
    const { message, stack_trace } = defaultPayloadConverter.fromPayload<{ message: string; stack_trace: string }>(attrs!);
    decodedMessages.push(message);
    expect(typeof stack_trace).toBe('string');
  }
  expect(decodedMessages.some((m) => m.includes(SECRETS.toolFailure))).toBe(true);
  expect(decodedMessages.some((m) => m.includes(SECRETS.workflowFailure))).toBe(true);
});

test('decoded with the keys, the same history does hold every secret (the scan above looked at real content)', async () => {
  const decoded = await decode(
    codecs,
    payloadsOf(raw).map((f) => f.payload),
  );
  const failureTexts = await Promise.all(failuresOf(raw).map(async ({ failure }) => text((await decode(codecs, [failure.encodedAttributes as Payload]))[0]!.data)));
  const all = [...decoded.map((p) => text(p.data)), ...failureTexts].join('\n');
  for (const [what, secret] of Object.entries(SECRETS)) expect({ what, found: all.includes(secret) }).toEqual({ what, found: true });
});

test('the codec server decodes a payload taken from the raw history over HTTP, and refuses without the token', async () => {
  const started = raw.events!.find((e) => e.workflowExecutionStartedEventAttributes)!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  const body = JSON.stringify({ payloads: [jsonOf(started)] });
  const post = (headers: Record<string, string>) => fetch(`${codecServer.url}/decode`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers }, body });

  const refused = await post({});
  expect(refused.status).toBe(401);
  expect(refused.headers.get('www-authenticate')).toBe('Bearer');
  expect((await post({ Authorization: 'Bearer wrong-token' })).status).toBe(401);

  const ok = await post({ Authorization: `Bearer ${TOKEN}` });
  expect(ok.status).toBe(200);
  const { payloads } = (await ok.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
  expect(Buffer.from(payloads[0]!.metadata.encoding!, 'base64').toString()).toBe('json/plain');
  const input = JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString('utf8')) as { prompt: string };
  expect(input.prompt).toContain(SECRETS.prompt);

  // The Web UI's preflight from its own origin is answered (no token on preflights); another origin is refused.
  const preflight = await fetch(`${codecServer.url}/decode`, {
    method: 'OPTIONS',
    headers: { Origin: 'http://localhost:8233', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-namespace' },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
  expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/i);
  expect((await post({ Authorization: `Bearer ${TOKEN}`, Origin: 'http://evil.example' })).status).toBe(403);
});

test('the temporal CLI shows the decrypted history through the codec server (--codec-endpoint, --codec-auth), and only ciphertext without it', async () => {
  const cli = await provisionTemporalCli();
  const show = (extra: string[]) =>
    run(cli, ['workflow', 'show', '--workflow-id', taskId, '--address', h.server.address, '--output', 'json', ...extra], { maxBuffer: 64 * 1024 * 1024 }).then((r) => r.stdout);
  // The CLI prints each payload's data as base64: read them all back.
  const dataOf = (json: string) => {
    const out: string[] = [];
    const walk = (node: unknown) => {
      if (!node || typeof node !== 'object') return;
      const { data } = node as { data?: unknown };
      if (typeof data === 'string') out.push(Buffer.from(data, 'base64').toString('utf8'));
      Object.values(node).forEach(walk);
    };
    walk(JSON.parse(json));
    return out.join('\n');
  };
  const decoded = dataOf(await show(['--codec-endpoint', codecServer.url, '--codec-auth', `Bearer ${TOKEN}`]));
  for (const secret of [SECRETS.prompt, SECRETS.argument, SECRETS.result, SECRETS.toolFailure, SECRETS.workflowFailure]) expect(decoded).toContain(secret);
  const plain = await show([]);
  expect(dataOf(plain)).not.toContain(SECRETS.prompt);
  expect(plain).toContain(Buffer.from(ENCRYPTED_ENCODING).toString('base64'));
});

test('replay with the keys: the encrypted history replays, and the committed (unencrypted) histories pass through the codec unchanged', async () => {
  const committed = committedHistories();
  const failures: string[] = [];
  const dataConverter = createDataConverter(codec);
  for await (const result of Worker.runReplayHistories({ workflowBundle: h.bundle, dataConverter }, [...committed, { workflowId: taskId, history: raw }])) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  expect(failures).toEqual([]);
});

describe('configured from the environment alone (DURABLE_AGENT_ENCRYPTION_KEYS): a `durable-agent worker` process and the CLI', () => {
  const keysEnv = { DURABLE_AGENT_ENCRYPTION_KEYS: `env-k:${randomBytes(32).toString('base64')}` };
  const ANSWER = `ANSWER-SECRET-${tag}`;

  test('the worker encrypts what it writes, its own workflow bundle encodes failures, and the CLI reads it back only with the keys', async () => {
    const worker = spawnCli(['worker', '--address', h.server.address, '--task-queue', h.taskQueue, '--workspace', h.workspaceDir, '--orders-url', h.orders.url], {
      ...keysEnv,
      DURABLE_AGENT_SCRIPT_DIRS: h.tmpDir,
      DURABLE_AGENT_BLOB_STORE: `file:${path.join(h.tmpDir, 'blobs')}`,
    });
    let stderr = '';
    worker.stderr!.on('data', (d) => (stderr += d));
    const client = await TaskClient.connect({ address: h.server.address, taskQueue: h.taskQueue, codec: { env: keysEnv } });
    try {
      const answered = h.taskId('env-answered');
      const failed = h.taskId('env-failed');
      await client.start({ agent: 'demo', prompt: `say it ${SECRETS.prompt}`, model: { provider: 'scripted', script: h.script([answer(ANSWER)]) } }, { taskId: answered });
      const failing = path.join(h.tmpDir, `env-${SECRETS.workflowFailure}.json`);
      writeFileSync(failing, JSON.stringify({ description: 'runs out', turns: [callTool('list_files', {})] }));
      await client.start({ agent: 'demo', prompt: 'list', model: { provider: 'scripted', script: failing } }, { taskId: failed });
      await waitFor(
        'both tasks to close',
        async () => {
          const states = await Promise.all(
            [answered, failed].map((id) =>
              client.client.workflow
                .getHandle(id)
                .describe()
                .then((d) => d.status.name),
            ),
          );
          return states.every((s) => s !== 'RUNNING') || undefined;
        },
        180_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\nworker stderr:\n${stderr}`);
      });

      const plainConnection = await Connection.connect({ address: h.server.address });
      try {
        const plain = new Client({ connection: plainConnection });
        for (const id of [answered, failed]) {
          const history = await plain.workflow.getHandle(id).fetchHistory();
          const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
          expect({ id, leaks: [SECRETS.prompt, ANSWER, SECRETS.workflowFailure].filter((x) => bytes.includes(x)) }).toEqual({ id, leaks: [] });
          for (const { where, payload } of payloadsOf(history)) expect({ where, key: text(payload.metadata![KEY_ID_METADATA]) }).toEqual({ where, key: 'env-k' });
        }
        const workflowFailure = failuresOf(await plain.workflow.getHandle(failed).fetchHistory()).find((f) => f.where.includes('workflowExecutionFailed'));
        expect(workflowFailure?.failure.message).toBe('Encoded failure');
      } finally {
        await plainConnection.close();
      }

      const cli = (args: string[], env: NodeJS.ProcessEnv) => runCli([...args, '--address', h.server.address, '--task-queue', h.taskQueue], env);
      const withKeys = await cli(['result', answered, '--json'], keysEnv);
      expect(withKeys.code).toBe(0);
      expect(withKeys.stdout).toContain(ANSWER);
      const failure = await cli(['result', failed], keysEnv);
      expect(failure.code).toBe(1);
      expect(failure.stderr).toContain(SECRETS.workflowFailure);
      // Without the keys the CLI cannot read the result, and says which key it lacks.
      const withoutKeys = await cli(['result', answered, '--json'], { DURABLE_AGENT_ENCRYPTION_KEYS: '' });
      expect(withoutKeys.code).not.toBe(0);
      expect(withoutKeys.stdout + withoutKeys.stderr).toMatch(/key id \\?"env-k\\?", but no encryption keys are configured/);
      expect(withoutKeys.stdout + withoutKeys.stderr).not.toContain(ANSWER);
    } finally {
      await client.client.connection.close();
      await sigkill(worker);
    }
  });

  test("`durable-agent codec-server` serves /decode with the environment's keys and its token, and refuses to start without keys", async () => {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const token = `cli-${tag}`;
    const [encrypted] = await createPayloadCodecs({ env: keysEnv })[1]!.encode([defaultPayloadConverter.toPayload({ note: SECRETS.prompt })]);
    const server = spawnCli(['codec-server', '--port', String(port)], { ...keysEnv, DURABLE_AGENT_CODEC_SERVER_TOKEN: token });
    let stderr = '';
    server.stderr!.on('data', (d) => (stderr += d));
    try {
      await waitFor('the codec server to listen', () => (stderr.includes('Codec server at') ? true : undefined), 60_000);
      const post = (auth?: string) =>
        fetch(`http://127.0.0.1:${port}/decode`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(auth ? { Authorization: auth } : {}) },
          body: JSON.stringify({ payloads: [jsonOf(encrypted!)] }),
        });
      expect((await post()).status).toBe(401);
      const ok = await post(`Bearer ${token}`);
      expect(ok.status).toBe(200);
      const { payloads } = (await ok.json()) as { payloads: { data: string }[] };
      expect(Buffer.from(payloads[0]!.data, 'base64').toString()).toContain(SECRETS.prompt);
    } finally {
      await sigkill(server);
    }
    const noKeys = await runCli(['codec-server', '--port', String(port)], { DURABLE_AGENT_ENCRYPTION_KEYS: '', DURABLE_AGENT_ENCRYPTION_KEY_FILE: '' });
    expect(noKeys.code).toBe(2);
    expect(noKeys.stderr).toMatch(/no encryption keys configured/);
  });
});

test("`durable-agent dev` with encryption on starts the Web UI with its codec endpoint, which decodes for the UI's origin", async () => {
  const keysEnv = { DURABLE_AGENT_ENCRYPTION_KEYS: `dev-k:${randomBytes(32).toString('base64')}` };
  const [port, uiPort] = [await freePort(), await freePort()];
  const home = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-dev-home-'));
  const cli = await provisionTemporalCli();
  const dev = spawnCli(['dev', '--port', String(port), '--ui-port', String(uiPort)], {
    ...keysEnv,
    // A state folder of its own (not the project's database), with the same Temporal CLI.
    DURABLE_AGENT_HOME: home,
    DURABLE_AGENT_TEMPORAL_CLI: cli,
    PATH: `${path.dirname(cli)}${path.delimiter}${process.env.PATH ?? ''}`,
  });
  let stderr = '';
  dev.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => dev.once('exit', resolve));
  try {
    await waitFor('durable-agent dev to be ready', () => (stderr.includes('Ready.') ? true : dev.exitCode !== null ? Promise.reject(new Error(stderr)) : undefined), 180_000);
    expect(stderr).toMatch(/Encryption: on; the Web UI decodes payloads through the codec server at http:\/\/127\.0\.0\.1:\d+/);
    // The UI tells the browser where its codec server is.
    const settings = (await (await fetch(`http://127.0.0.1:${uiPort}/api/v1/settings`)).json()) as { Codec?: { Endpoint?: string } };
    const endpoint = settings.Codec?.Endpoint;
    expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const origin = `http://127.0.0.1:${uiPort}`;
    const preflight = await fetch(`${endpoint}/decode`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
    const [encrypted] = await createPayloadCodecs({ env: keysEnv })[1]!.encode([defaultPayloadConverter.toPayload({ prompt: SECRETS.prompt })]);
    const decoded = await fetch(`${endpoint}/decode`, {
      method: 'POST',
      headers: { Origin: origin, 'Content-Type': 'application/json', 'X-Namespace': 'default' },
      body: JSON.stringify({ payloads: [jsonOf(encrypted!)] }),
    });
    expect(decoded.status).toBe(200);
    const { payloads } = (await decoded.json()) as { payloads: { data: string }[] };
    expect(Buffer.from(payloads[0]!.data, 'base64').toString()).toContain(SECRETS.prompt);
  } finally {
    // SIGINT: dev drains its worker and stops the server it started.
    if (dev.exitCode === null) dev.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 30_000)))]);
    clearTimeout(timer);
    if (dev.exitCode === null) await sigkill(dev);
  }
});
