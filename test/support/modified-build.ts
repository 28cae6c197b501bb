/**
 * Another build of the workflow code, as an operator's next release would be: a copy of the
 * workflow sources with a change to agent-task.ts, bundled. The deploy tests use it for v2.
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { temporal } from '@temporalio/proto';
import { workflowBundleOf } from '../../src/worker/workflow-bundle';

const ROOT = path.resolve(__dirname, '../..');

/** Bundles the workflow sources with `change` applied to agent-task.ts under `<tmpDir>/<name>`; the change must change something. */
export async function modifiedBuild(tmpDir: string, name: string, change: (source: string) => string): Promise<{ srcDir: string; codePath: string }> {
  const dir = path.join(tmpDir, name);
  const srcDir = path.join(dir, 'src');
  for (const d of ['workflows', 'rules', 'protocol']) cpSync(path.join(ROOT, 'src', d), path.join(srcDir, d), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  const entry = path.join(srcDir, 'workflows', 'agent-task.ts');
  const before = readFileSync(entry, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`modifiedBuild ${name}: the change left agent-task.ts as it was`);
  writeFileSync(entry, after);
  mkdirSync(path.join(dir, 'bundles'), { recursive: true });
  const { codePath } = await workflowBundleOf(srcDir, path.join(dir, 'bundles'));
  return { srcDir, codePath };
}

/** v2's change in the deploy tests: a 10 ms timer when a run starts, before its first model call, with no patch (v1 histories cannot replay on it). */
export function withStartTimer(source: string): string {
  return source
    .replace(
      "import { allHandlersFinished, ApplicationFailure, CancellationScope, condition, ContinueAsNew, isCancellation } from '@temporalio/workflow';",
      "import { allHandlersFinished, ApplicationFailure, CancellationScope, condition, ContinueAsNew, isCancellation, sleep } from '@temporalio/workflow';",
    )
    .replace('const { manifest, gate } = await configureRun(run);', "const { manifest, gate } = await configureRun(run);\n    await sleep('10ms');");
}

/** The timer only withStartTimer's build starts. */
export function isStartTimer(e: temporal.api.history.v1.IHistoryEvent): boolean {
  const t = e.timerStartedEventAttributes?.startToFireTimeout;
  return !!t && Number(t.seconds ?? 0) === 0 && t.nanos === 10_000_000;
}
