import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { startHarness } from '../test/support/harness';
import { engineTurns } from './overhead';
import { bareTurns } from './bare-temporal';
import { summarize } from './stats';

async function main() {
  const h = await startHarness();
  try {
    const mode = process.env.MODE ?? 'engine';
    const run = (n: number) => (mode === 'engine' ? engineTurns(h, n) : bareTurns(h, n, { local: true }));
    await run(30);
    await run(30);
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    const t0 = performance.now();
    const turns = await run(300);
    const wall = performance.now() - t0;
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(`/tmp/prof/main-${mode}.cpuprofile`, JSON.stringify(profile));
    console.log(mode, 'median', summarize(turns, 2).median, 'wall', Math.round(wall));
  } finally {
    await h.close();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
