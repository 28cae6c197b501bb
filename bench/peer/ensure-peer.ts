/**
 * Installs the LangGraph peer's packages into bench/peer/node_modules when they are missing or
 * older than its lock, the way the project installs its own (scripts/ensure-deps.mjs). Apart from
 * the project's packages because better-sqlite3 has no prebuilt binary offline and is compiled from
 * source (about a minute), which `npm test` should not pay for.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const PEER_DIR = __dirname;
const ENSURE_DEPS = path.resolve(__dirname, '../../scripts/ensure-deps.mjs');

export type PeerInstall = { ok: true } | { ok: false; reason: string };

let installed: PeerInstall | undefined;

/** Checked (and installed) once per process; the benchmarks ask before every peer run. */
export function ensurePeerInstalled(): PeerInstall {
  return (installed ??= install());
}

function install(): PeerInstall {
  try {
    execFileSync(process.execPath, [ENSURE_DEPS, PEER_DIR], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...nodeHeadersEnv() } });
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `installing the packages of ${PEER_DIR} failed: ${(err as Error).message.split('\n')[0]}` };
  }
}

/**
 * node-gyp downloads Node's headers unless told where they are; offline that fails. Node installs
 * its headers beside its binary (<prefix>/bin/node, <prefix>/include/node), so point there when
 * they exist and the user has not chosen a nodedir.
 */
function nodeHeadersEnv(): Record<string, string> {
  if (process.env.npm_config_nodedir) return {};
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return existsSync(path.join(prefix, 'include/node/node.h')) ? { npm_config_nodedir: prefix } : {};
}
