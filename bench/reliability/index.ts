/**
 * `npm run bench -- reliability [--quick] [--engines a,b] [--tasks t01,t02] [--faults c1,c2] [--reps K]
 * [--kill-sample S] [--model trajectory|hint-following|both] [--parallel|--sequential] [--name NAME]`:
 * every task on every engine under every fault class, K times, with each scripted model (default
 * both: the trajectory model, then the hint-following one); writes bench/results/NAME.json, NAME.md
 * and docs/images/NAME.svg (NAME default `reliability`).
 * `--quick`: the five tasks of QUICK_TASK_IDS, K = 2, one kill boundary per task and repetition (the two
 * repetitions at different boundaries), the engines run side by side.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_ENGINES, ENGINES } from './engines';
import { DEFAULT_FAULT_CLASSES, FAULT_CLASSES, type FaultClass } from './faults';
import { MODEL_KINDS, type ModelKind, runSuite } from './harness';
import { askKindsNotes, figuresOf, PERSON_ASKS_NOTE, reliabilitySvg, reliabilityTable } from './report';
import { QUICK_TASK_IDS, TASKS } from './tasks';

export interface ReliabilityArgs {
  quick: boolean;
  engines?: string[];
  tasks?: string[];
  faultClasses?: FaultClass[];
  reps?: number;
  killSample?: number;
  parallel?: boolean;
  /** The scripted models (`--model trajectory|hint-following|both`, or a comma list). Default both. */
  models?: ModelKind[];
  /** Output files' name. Default `reliability`. */
  name?: string;
}

/** `--model` value: `both`, one model, or a comma list; a bad name is refused with the known ones. */
export function parseModels(value: string): ModelKind[] {
  const names = value === 'both' || value === 'all' ? [...MODEL_KINDS] : value.split(',').filter(Boolean);
  for (const n of names) if (!(MODEL_KINDS as readonly string[]).includes(n)) throw new Error(`--model: no model "${n}"; known: ${MODEL_KINDS.join(', ')}, both`);
  if (!names.length) throw new Error(`--model needs a value: ${MODEL_KINDS.join(', ')} or both`);
  return names as ModelKind[];
}

export function parseReliabilityArgs(argv: string[]): ReliabilityArgs {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (flag: string) => value(flag)?.split(',').filter(Boolean);
  return {
    quick: argv.includes('--quick'),
    ...(list('--engines') ? { engines: list('--engines')! } : {}),
    ...(list('--tasks') ? { tasks: list('--tasks')! } : {}),
    ...(list('--faults') ? { faultClasses: list('--faults') as FaultClass[] } : {}),
    ...(value('--reps') ? { reps: Number(value('--reps')) } : {}),
    ...(value('--kill-sample') ? { killSample: Number(value('--kill-sample')) } : {}),
    ...(value('--name') ? { name: value('--name')! } : {}),
    ...(argv.includes('--model') || argv.includes('--models') ? { models: parseModels(value('--model') ?? value('--models') ?? '') } : {}),
    ...(argv.includes('--parallel') ? { parallel: true } : argv.includes('--sequential') ? { parallel: false } : {}),
  };
}

export async function measureReliability(args: ReliabilityArgs, outDir: string, imagesDir: string): Promise<void> {
  const reps = args.reps ?? (args.quick ? 2 : 4);
  const killSample = args.killSample ?? (args.quick ? 1 : undefined);
  const parallel = args.parallel ?? args.quick;
  const taskIds = args.tasks ?? (args.quick ? QUICK_TASK_IDS : TASKS.map((t) => t.id));
  const tasks = taskIds.map((id) => {
    const task = TASKS.find((t) => t.id === id);
    if (!task) throw new Error(`no task ${id}`);
    return task;
  });
  const engineNames = args.engines ?? DEFAULT_ENGINES;
  const engines = engineNames.map((name) => {
    const make = ENGINES[name];
    if (!make) throw new Error(`no engine ${name}; known: ${Object.keys(ENGINES).join(', ')}`);
    return make();
  });
  const faultClasses = args.faultClasses ?? [...DEFAULT_FAULT_CLASSES];
  for (const c of faultClasses) if (!(FAULT_CLASSES as readonly string[]).includes(c)) throw new Error(`--faults: no fault class "${c}"; known: ${FAULT_CLASSES.join(', ')}`);
  const models = args.models ?? [...MODEL_KINDS];
  const loadBefore = os.loadavg();
  const started = Date.now();
  console.log(
    `\nReliability: ${tasks.length} tasks x ${engines.length} engines x ${faultClasses.length} fault classes, k = ${reps}` +
      (killSample ? `; kill boundaries sampled: ${killSample} per task and repetition, the repetitions at different ones (not every boundary)` : '; a kill at every boundary') +
      (parallel ? '; engines side by side' : '') +
      `; models: ${models.join(', ')}`,
  );
  const records = await runSuite({ tasks, engines, faultClasses, reps, parallel, models, ...(killSample ? { killSample } : {}) });
  const figures = figuresOf(
    records,
    reps,
    engines.map((e) => e.name),
  );
  const variant = args.quick ? 'quick' : killSample ? 'kills sampled' : 'full';
  const name = args.name ?? 'reliability';
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGb: Math.round(os.totalmem() / 2 ** 30), node: process.version };
  mkdirSync(outDir, { recursive: true });
  mkdirSync(imagesDir, { recursive: true });
  writeFileSync(
    path.join(outDir, `${name}.json`),
    JSON.stringify(
      {
        measuredAt: new Date().toISOString(),
        machine,
        loadAverage: { before: loadBefore, after: os.loadavg() },
        variant,
        reps,
        models,
        killBoundaries: killSample ? `sampled: ${killSample} per task and repetition` : 'every boundary',
        tasks: tasks.map((t) => ({ id: t.id, title: t.title, approval: !!t.approval, subagent: t.agent === 'lead', long: !!t.long })),
        engines: engines.map((e) => ({ name: e.name, description: e.description })),
        wallSeconds: Math.round((Date.now() - started) / 1000),
        figures,
        runs: records,
      },
      null,
      2,
    ) + '\n',
  );
  const table = reliabilityTable(figures, reps);
  const header = `Reliability (${variant}: ${tasks.length} tasks, k = ${reps}${killSample ? `, kill boundaries sampled ${killSample} per task and repetition` : ''}; models: ${models.join(', ')}), measured ${new Date().toISOString().slice(0, 10)}:`;
  const notes = `${PERSON_ASKS_NOTE}\n\nWhat the asks were:\n\n${askKindsNotes(figures)}`;
  writeFileSync(path.join(outDir, `${name}.md`), `${header}\n\n${table}\n\n${notes}\n`);
  writeFileSync(path.join(imagesDir, `${name}.svg`), reliabilitySvg(figures, reps, `pass^${reps} per engine and fault class (${variant}: ${tasks.length} tasks)`));
  console.log(`\n${header}\n\n${table}\n\n${askKindsNotes(figures)}\n\n(${Math.round((Date.now() - started) / 1000)} s)`);
}
