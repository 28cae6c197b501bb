import { mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pruneLogs } from '../../src/cli/runtime-logging';

test("the logs folder keeps the newest runs' files (room left for the new one), and only .log files are touched", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-logs-'));
  for (let i = 0; i < 6; i++) {
    const file = path.join(dir, `worker-${i}.log`);
    writeFileSync(file, 'x');
    utimesSync(file, 1_000 + i, 1_000 + i);
  }
  writeFileSync(path.join(dir, 'notes.txt'), 'mine');
  pruneLogs(dir, 4);
  expect(readdirSync(dir).sort()).toEqual(['notes.txt', 'worker-3.log', 'worker-4.log', 'worker-5.log']);
});
