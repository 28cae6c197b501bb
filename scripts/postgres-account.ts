/**
 * initdb and postgres refuse to run as root: as root, the tests' throwaway servers and the cluster's
 * run as the `postgres` account. Undefined when we are not root (they run as ourselves).
 */
import { execFileSync } from 'node:child_process';

export interface PostgresAccount {
  uid: number;
  gid: number;
  /** Runs a command as that account; setpriv execs (no intermediate process), so a recorded pid is the server's own. */
  prefix: string[];
}

export function postgresAccount(): PostgresAccount | undefined {
  if (process.getuid?.() !== 0) return undefined;
  let uid: number;
  let gid: number;
  try {
    uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  } catch {
    throw new Error('Running as root, and there is no `postgres` account to run PostgreSQL as (initdb refuses root). Create one: useradd --system postgres');
  }
  return { uid, gid, prefix: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'] };
}
