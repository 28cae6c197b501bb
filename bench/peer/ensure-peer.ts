/**
 * Installs the LangGraph peer's packages into bench/peer/node_modules when they are missing or
 * older than its lock. Apart from the project's packages because better-sqlite3 has no prebuilt
 * binary offline and is compiled from source (about a minute), which `npm test` should not pay for.
 */
import { execSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

const PEER_DIR = __dirname;

export type PeerInstall = { ok: true } | { ok: false; reason: string };

export function ensurePeerInstalled(): PeerInstall {
  const marker = path.join(PEER_DIR, 'node_modules/.package-lock.json');
  const lock = path.join(PEER_DIR, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return { ok: true };
  console.error('Installing the LangGraph peer (bench/peer; better-sqlite3 compiles from source, about a minute)...');
  try {
    execSync('npm install --no-save --no-audit --no-fund', {
      cwd: PEER_DIR,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, ...nodeHeadersEnv() },
    });
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `npm install in ${PEER_DIR} failed: ${(err as Error).message.split('\n')[0]}` };
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
