import { usageError } from './cli-error';

/**
 * The port `dev` and `demo` serve Temporal on when no --port is given: the port of TEMPORAL_ADDRESS
 * when that names this machine, so the server lands where every other command of the same shell
 * connects (they read TEMPORAL_ADDRESS too); else Temporal's own default, 7233.
 */
export const DEFAULT_LOCAL_PORT = 7233;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

export function localServerPort(env: NodeJS.ProcessEnv = process.env): number {
  const address = env.TEMPORAL_ADDRESS?.trim();
  if (!address) return DEFAULT_LOCAL_PORT;
  const match = /^(.*):(\d{1,5})$/.exec(address);
  if (!match || !LOOPBACK.has(match[1]!)) return DEFAULT_LOCAL_PORT;
  const port = Number(match[2]);
  return port >= 1 && port <= 65_535 ? port : DEFAULT_LOCAL_PORT;
}

/**
 * Where `dev` and `demo` serve the embedded server's Web UI: `--headless` none (false), else
 * `--ui-port N`, else the server's port + 1000 (README "Ports"). Used only when they start the
 * server: a server they reuse keeps the UI it has.
 */
export function webUiPort(values: { 'ui-port'?: string | undefined; headless?: boolean | undefined }, port: number): number | false {
  if (values.headless) return false;
  if (values['ui-port'] === undefined) return port + 1000;
  const n = Number(values['ui-port']);
  if (!Number.isInteger(n) || n < 1 || n > 65_535) throw usageError(`--ui-port must be a port from 1 to 65535, got "${values['ui-port']}"`);
  return n;
}
