/**
 * `export TASK`, `replay TASK|FILE` and `eval DIR` (docs/replay.md): a task's recording as one
 * sealed file, run again against another model or system prompt with every tool answered from the
 * recording, and a folder of recordings checked against their expectations.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { BlobMissingError, BlobTamperedError } from '../../blobs/blob-store';
import { BlobDecryptionError, BlobKeyNotFoundError } from '../../blobs/blob-envelope';
import { BLOB_STORE_ENV, openBlobStore } from '../../blobs/open-blob-store';
import type { BlobStore } from '../../blobs/blob-store';
import type { TaskClient } from '../../client/task-client';
import { loadConnectionConfig } from '../../client/connection-config';
import { defaultScriptRoots, type ModelEnvironment } from '../../models/create-model';
import type { ModelChoice } from '../../protocol/agent-settings';
import { recordTask } from '../../replay/record-task';
import { loadRecording, RecordingError, type Recording } from '../../replay/recording';
import { ReplayCannotRunError, ReplayModelError, replayRecording, type ReplayOptions } from '../../replay/run-replay';
import { renderDiff } from '../../replay/trajectory-diff';
import { evalCases, evalExitCode, loadEvalDir, renderEvalTable } from '../../replay/eval';
import { parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { CliError, EXIT, usageError } from '../cli-error';
import { unreachableError } from '../connect';
import { branchIdentity, branchingClient } from '../branch-identity';
import { loadAgents } from '../load-agents';
import { printJson } from '../json-output';
import { evalOutputJson, replayOutputJson } from '../json-branches';
import type { AgentDefinition } from '../../agents/define-agent';

export const replayHelp = `durable-agent export TASK [--as NAME] [--role ROLE]... [--out FILE] [--blob-store SPEC]
  TASK's recording as one self-contained JSON file (default ./TASK.json): prompt, agent manifest,
  every turn with its tool calls (exact arguments, results), approvals, outcome, tokens and cost,
  claim-checked content included and checked against its hash, a scripted model's script carried as
  content (not its path); sealed with a content hash. Exit 3: no such task.

durable-agent replay TASK|FILE [--as NAME] [--role ROLE]... [--agents FILE] [--model ID | --script FILE] [--system FILE] [--json] [--verbose] [--blob-store SPEC]
  Runs the recorded task again from turn 0 against another model or system prompt, on a worker of
  its own that answers every tool from the recording and runs none (a call the recording does not
  hold gets a not_recorded error), then prints both trajectories side by side. --agents: the agent
  as that module defines it now (prompt, tool declarations, policy, model); its tools never run.
  A recording that cannot run here (an older one naming a script not here): exit 2, one line.

durable-agent eval DIR [--agents FILE] [--model ID | --script FILE] [--system FILE] [--json] [--verbose]
  Replays every recording in DIR (NAME.json, expectations in NAME.expect.json: outcome,
  requiredTools, forbiddenTools, maxTurns, maxCostUsd; without one, the recorded outcome) and prints
  a table. A replay reads nothing outside the recording, so eval on another machine, in CI or after
  .durable-agent is cleaned gives the same verdict. Exit 0: all passed; 1: any regressed; 2: an
  edited or malformed file (nothing replayed), or a case that cannot run and none regressed (its row
  says CANNOT RUN and what is missing, e.g. an older recording's script path that is not here).
  Store (export and replay of a TASK): --blob-store, else ${BLOB_STORE_ENV}, else
  .durable-agent/blobs; replay FILE and eval read no store, only the recording.
  replay and eval run a worker of their own: the Temporal SDK's logs go to .durable-agent/logs/
  (a file per run), and --verbose shows them on stderr too; an error is one line on stderr.
  export and replay of a TASK are branches of it: --as (default $USER) and --role, signed with this
  terminal's key when it has one, must pass the agent's policy (approvers.branch), else exit 1.
  See docs/replay.md.`;

/** A file that cannot be read as a recording is bad input, as a bad argument is. */
function asCliError(err: unknown): unknown {
  if (err instanceof RecordingError) return usageError(err.message);
  if (err instanceof BlobMissingError) return new CliError(`stored content ${err.id} of the task is gone (purged, or another store); nothing exported or replayed`);
  if (err instanceof BlobTamperedError) return new CliError(`stored content of the task is not what its id names (${err.message}); nothing exported or replayed`);
  if (err instanceof BlobKeyNotFoundError || err instanceof BlobDecryptionError) return new CliError(`stored content of the task cannot be decrypted here: ${err.message}`);
  if (err instanceof ReplayModelError) return new CliError(err.message);
  // Not a verdict on the agent: what the replay needs is neither in the recording nor here.
  if (err instanceof ReplayCannotRunError) return usageError(`cannot run: ${err.message}`);
  return err;
}

function storeOf(spec: string | undefined): BlobStore {
  try {
    return openBlobStore(spec);
  } catch (err) {
    throw usageError((err as Error).message);
  }
}

/** A file name for TASK in the current folder: ids may hold any character, file names may not. */
const defaultOut = (taskId: string) => `${taskId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;

export async function exportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.export.options, VERB_ARGS.export.positionals);
  const taskId = positionals[0]!;
  const who = branchIdentity(values);
  const out = path.resolve(values.out ?? defaultOut(taskId));
  const client = await branchingClient(values);
  // Checked before the store is opened: a refused export reads nothing of the task's content.
  await client.assertMayBranch(taskId, 'export', who).catch(async (err: unknown) => {
    await client.client.connection.close();
    throw err;
  });
  const store = storeOf(values['blob-store']);
  try {
    const recording = await recordTask(client, taskId, { blobStore: store }).catch((err: unknown) => {
      throw asCliError(err);
    });
    // Written whole or not at all: a half-written recording would fail its hash later, far from here.
    const partial = `${out}.${randomUUID().slice(0, 8)}.partial`;
    await writeFile(partial, `${JSON.stringify(recording, null, 2)}\n`, { flag: 'wx' });
    await rename(partial, out);
    const calls = recording.turns.reduce((n, t) => n + t.toolCalls.length, 0);
    const model = recording.modelChoice ?? recording.manifest.model;
    const script = recording.modelScript
      ? `, model script ${recording.modelScript.name} included`
      : model.provider === 'scripted'
        ? `, model script ${model.script} NOT included (not readable here; replays need --script or --model)`
        : '';
    console.log(`exported ${taskId}: ${recording.turns.length} turns, ${calls} tool calls, ${recording.claimChecked.length} stored blobs${script} -> ${out}`);
    return EXIT.ok;
  } finally {
    await store.close();
    await client.client.connection.close();
  }
}

/** The replay's model and its environment, checked before anything starts. */
function replayModel(values: { model?: string | undefined; script?: string | undefined }): { model?: ModelChoice; modelEnv: ModelEnvironment } {
  if (values.model && values.script) throw usageError('--model and --script are exclusive');
  if (values.script) {
    const file = path.resolve(values.script);
    if (!existsSync(file) || !statSync(file).isFile()) throw usageError(`--script ${values.script}: no such file`);
    const real = realpathSync(file);
    // The replay's worker is this process: the script's own folder is one it may read.
    return { model: { provider: 'scripted', script: real }, modelEnv: { scriptRoots: [path.dirname(real), ...defaultScriptRoots()] } };
  }
  if (values.model !== undefined) {
    if (!values.model.trim()) throw usageError('--model is empty');
    return { model: { provider: 'anthropic', model: values.model }, modelEnv: {} };
  }
  return { modelEnv: {} };
}

function systemPrompt(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw usageError(`--system ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/**
 * The agents as an agents module defines them now. Their tools are never called in a replay, so
 * the module gets a scratch folder as its workspace.
 */
async function currentAgents(file: string | undefined): Promise<AgentDefinition[] | undefined> {
  if (file === undefined) return undefined;
  return loadAgents(file, { workspaceDir: path.join(os.tmpdir(), 'durable-agent-replay-workspace') });
}

function currentAgent(agents: AgentDefinition[] | undefined, recording: Recording, file: string | undefined): AgentDefinition | undefined {
  if (!agents) return undefined;
  const agent = agents.find((a) => a.name === recording.agent);
  if (!agent) throw usageError(`--agents ${file}: no agent named "${recording.agent}" (the recording's); it has ${agents.map((a) => a.name).join(', ')}`);
  return agent;
}

/** Runs `work` with a client and a worker connection to the same server, closed afterwards. */
async function withServer<T>(
  values: { address?: string | undefined; namespace?: string | undefined },
  work: (client: TaskClient, options: Pick<ReplayOptions, 'client' | 'connection' | 'namespace'>) => Promise<T>,
): Promise<T> {
  const client = await branchingClient(values);
  const config = loadConnectionConfig({ ...(values.address ? { address: values.address } : {}), ...(values.namespace ? { namespace: values.namespace } : {}) });
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect(config.connectionOptions);
  } catch (err) {
    await client.client.connection.close();
    throw unreachableError(config.connectionOptions.address, config.namespace, err);
  }
  try {
    return await work(client, { client, connection, namespace: config.namespace });
  } finally {
    await connection.close();
    await client.client.connection.close();
  }
}

export async function replayCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.replay.options, VERB_ARGS.replay.positionals);
  const target = positionals[0]!;
  const who = branchIdentity(values);
  const { model, modelEnv } = replayModel(values);
  const system = systemPrompt(values.system);
  const agents = await currentAgents(values.agents);
  const fromFile = target.endsWith('.json') && existsSync(target);
  const loaded = fromFile ? await loadRecording(target).catch((err: unknown) => Promise.reject(asCliError(err))) : undefined;
  return withServer(values, async (client, server) => {
    let recording: Recording;
    if (loaded) recording = loaded;
    else {
      await client.assertMayBranch(target, 'replay', who);
      const store = storeOf(values['blob-store']);
      try {
        recording = await recordTask(client, target, { blobStore: store }).catch((err: unknown) => Promise.reject(asCliError(err)));
      } finally {
        await store.close();
      }
    }
    const current = currentAgent(agents, recording, values.agents);
    const { diff, replayId } = await replayRecording(recording, {
      ...server,
      ...(model ? { model } : {}),
      ...(system !== undefined ? { system } : {}),
      ...(current ? { current } : {}),
      modelEnv,
    }).catch((err: unknown) => Promise.reject(asCliError(err)));
    if (values.json) printJson(replayOutputJson, { replayId, diff });
    else console.log(renderDiff(diff));
    return EXIT.ok;
  });
}

export async function evalCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, VERB_ARGS.eval.options, VERB_ARGS.eval.positionals);
  const { model, modelEnv } = replayModel(values);
  const system = systemPrompt(values.system);
  // Every file is checked before the first replay: an edited one stops the run with nothing replayed.
  const cases = await loadEvalDir(positionals[0]!).catch((err: unknown) => Promise.reject(asCliError(err)));
  const agents = await currentAgents(values.agents);
  for (const c of cases) currentAgent(agents, c.recording, values.agents);
  return withServer(values, async (_client, server) => {
    const rows = await evalCases(cases, { ...server, ...(model ? { model } : {}), ...(system !== undefined ? { system } : {}), ...(agents ? { agents } : {}), modelEnv });
    const passed = rows.every((r) => r.passed);
    if (values.json) printJson(evalOutputJson, { passed, rows });
    else console.log(renderEvalTable(rows));
    // A case that cannot run is no verdict: exit 2 unless another one regressed (exit 1).
    return [EXIT.ok, EXIT.failed, EXIT.usage][evalExitCode(rows)]!;
  });
}
