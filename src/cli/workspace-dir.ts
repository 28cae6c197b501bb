/** The folder a user's agents module is given (`--workspace`, default `.durable-agent/workspace`): one rule for `worker` and `deploy check`. */
import path from 'node:path';
import { stateDir } from '../server/state-dir';

export function workspaceOf(given: string | undefined): string {
  return path.resolve(given ?? path.join(stateDir(), 'workspace'));
}
