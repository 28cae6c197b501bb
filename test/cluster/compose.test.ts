/**
 * docker-compose.yml stays in step with `npm run cluster`: the same server version, shard count,
 * PostgreSQL major version, schema steps, dynamic config and two workers. Docker itself is not needed:
 * `docker-compose config` validates the file, the rest reads it.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_HISTORY_SHARDS, DEFAULT_WORKERS, TEMPORAL_SERVER_VERSION } from '../../scripts/cluster/layout';
import { DYNAMIC_CONFIG_FILE } from '../../scripts/cluster/temporal-config';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../src/server/dev-server';
import { testNeeding } from '../support/prerequisites';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const COMPOSE = path.join(ROOT, 'docker-compose.yml');

/** `key:\n  - value: V` entries of a Temporal dynamic config file (the only form ours uses). */
function dynamicConfig(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let key: string | undefined;
  for (const line of text.split('\n')) {
    const k = /^([A-Za-z][\w.]*):\s*$/.exec(line);
    if (k) key = k[1];
    const v = /^\s+- value:\s*(.+)$/.exec(line);
    if (v && key) out[key] = JSON.parse(v[1]!);
  }
  return out;
}

function dockerCompose(): string | undefined {
  try {
    execFileSync('docker-compose', ['version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'docker-compose is not installed';
  }
}
const composeTest = testNeeding('compose.test.ts', { missing: dockerCompose(), install: 'apt-get install docker-compose' });

composeTest('docker-compose.yml is a valid compose file (docker-compose config -q)', async () => {
  const result = await run('docker-compose', ['-f', COMPOSE, 'config', '-q'], { cwd: ROOT }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`invalid: ${err.stderr ?? err.message}`);
  });
  expect(result.stderr.trim()).toBe('');
});

test('docker-compose.yml runs the same Temporal version, shard count, PostgreSQL major version, schema steps and number of workers as npm run cluster', () => {
  const compose = readFileSync(COMPOSE, 'utf8');
  const serverImages = [...compose.matchAll(/image: temporalio\/auto-setup:(\S+)/g)].map((m) => m[1]);
  expect(serverImages.length).toBeGreaterThanOrEqual(2);
  for (const tag of serverImages) expect(tag).toBe(TEMPORAL_SERVER_VERSION);
  expect(compose).toContain(`NUM_HISTORY_SHARDS: "${DEFAULT_HISTORY_SHARDS}"`);
  // The local cluster runs Debian 12's PostgreSQL 15 (scripts/ensure-postgres.mjs picks the newest installed).
  for (const m of compose.matchAll(/image: postgres:(\S+)/g)) expect(m[1]).toBe('15');
  for (const step of ['create-database', 'setup-schema -v 0.0', 'update-schema -d "/etc/temporal/schema/postgresql/v12/$$dir/versioned"']) expect(compose).toContain(step);
  expect(compose).toContain('temporal_visibility:visibility');
  const workers = [...compose.matchAll(/^  (worker-\d+):$/gm)].map((m) => m[1]);
  expect(workers).toHaveLength(DEFAULT_WORKERS);
  expect(compose).toContain('./scripts/cluster/dynamicconfig.yaml:/etc/temporal/config/dynamicconfig/durable-agent.yaml');
});

test("the cluster's dynamic config (shared with docker-compose.yml) has the embedded dev server's settings", () => {
  const settings = dynamicConfig(readFileSync(DYNAMIC_CONFIG_FILE, 'utf8'));
  for (const [key, value] of Object.entries(DEV_SERVER_DYNAMIC_CONFIG)) expect({ key, value: settings[key] }).toEqual({ key, value });
});
