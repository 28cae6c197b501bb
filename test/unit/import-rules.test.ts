/**
 * The rooms of src/ and the arrows between them (docs/architecture.md, "Import rules"): read from
 * the source text, type-only imports and `import()` included, since a type cycle is a cycle too.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.join(__dirname, '../../src');
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"](\.{1,2}\/[^'"]*)['"]/g;

type Graph = Map<string, Set<string>>;

function resolve(from: string, request: string): string | undefined {
  const base = path.resolve(path.dirname(path.join(SRC, from)), request);
  for (const file of [`${base}.ts`, path.join(base, 'index.ts'), base]) {
    const relative = path.relative(SRC, file);
    if (!relative.startsWith('..') && FILES.has(relative)) return relative;
  }
  return undefined;
}

const FILES = new Set(
  readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/')),
);

function fileGraph(): Graph {
  const graph: Graph = new Map();
  for (const file of FILES) {
    const text = readFileSync(path.join(SRC, file), 'utf8');
    const targets = new Set<string>();
    for (const match of text.matchAll(IMPORT)) {
      const target = resolve(file, match[1]!);
      if (target) targets.add(target.split(path.sep).join('/'));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** A file's room: its first folder under src/ (`index.ts` at the top is the package root). */
const roomOf = (file: string) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '(root)');

function roomGraph(files: Graph): Graph {
  const rooms: Graph = new Map();
  for (const [from, targets] of files) {
    for (const to of targets) {
      if (roomOf(from) === roomOf(to)) continue;
      if (!rooms.has(roomOf(from))) rooms.set(roomOf(from), new Set());
      rooms.get(roomOf(from))!.add(roomOf(to));
    }
  }
  return rooms;
}

/** Every group of nodes that reach each other (Tarjan), largest first: a cycle each. */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1 || graph.get(node)?.has(node)) found.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => b.length - a.length);
}

const files = fileGraph();
const rooms = roomGraph(files);
const arrowsFrom = (room: string) => [...(rooms.get(room) ?? [])].sort();
const roomsImporting = (target: string) =>
  [...rooms]
    .filter(([, to]) => to.has(target))
    .map(([from]) => from)
    .sort();

test('the check reads type-only imports, import() and re-exports, and finds a cycle through them', () => {
  const graph: Graph = new Map([
    ['a', new Set(['b'])],
    ['b', new Set(['c'])],
    ['c', new Set(['a'])],
    ['d', new Set(['a'])],
  ]);
  expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  const probe = ["import type { X } from './protocol/task';", "type Y = import('./rules/task-limits').Z;", "export { W } from './protocol/blob-marker';"].join('\n');
  expect([...probe.matchAll(IMPORT)].map((m) => m[1])).toEqual(['./protocol/task', './rules/task-limits', './protocol/blob-marker']);
  // The project's own graph is read: a known arrow is in it.
  expect(files.get('activities/run-tool.ts')).toContain('rules/tool-gate.ts');
});

test('protocol imports nothing outside itself, and the pure rules only protocol', () => {
  expect(arrowsFrom('protocol')).toEqual([]);
  expect(arrowsFrom('rules')).toEqual(['protocol']);
  expect(arrowsFrom('workflows')).toEqual(['protocol', 'rules']);
});

test('no cycle between rooms, and none between the files of any room (type-only imports count)', () => {
  expect(cycles(rooms)).toEqual([]);
  expect(cycles(files)).toEqual([]);
});

test('the demo stays in its room: only the CLI imports it, and only the demo imports the testing kit', () => {
  expect(roomsImporting('demo')).toEqual(['cli']);
  expect(roomsImporting('testing')).toEqual(['demo']);
  // Activities reach notifications through their own room, never the inbox.
  expect(arrowsFrom('activities')).not.toContain('inbox');
  // Activities read a task's history through history/, never the client's room.
  expect(arrowsFrom('activities')).not.toContain('client');
  expect(arrowsFrom('client')).not.toContain('worker');
});

test('one history reader: history/ sits under client and activities (protocol, rules, errors, blobs below it); activities read history and stored arguments there, never through client/', () => {
  expect(arrowsFrom('history')).toEqual(['blobs', 'errors', 'protocol', 'rules']);
  expect(roomsImporting('history')).toEqual(['activities', 'cli', 'client', 'deploy', 'forks', 'replay']);
  expect(arrowsFrom('activities')).not.toContain('client');
  // The SDK's decode and the history fetches are used in the reader only.
  const readers = [...FILES].filter((file) => /decodeFromPayloadsAtIndex|fetchHistory|getWorkflowExecutionHistory/.test(readFileSync(path.join(SRC, file), 'utf8')));
  expect(readers).toEqual(['history/task-history.ts']);
});

test('activities: one file per activity, none over 200 lines; createActivities only wires them', () => {
  const activityFiles = [...FILES].filter((file) => roomOf(file) === 'activities');
  const long = activityFiles.map((file) => [file, readFileSync(path.join(SRC, file), 'utf8').split('\n').length - 1] as const).filter(([, lines]) => lines > 200);
  expect(long).toEqual([]);
  for (const activity of ['call-model', 'run-tool', 'describe-agent', 'summarize-turns', 'prepare-tool-call', 'notify', 'store-audit', 'load-text']) {
    expect(files.get('activities/agent-activities.ts')).toContain(`activities/${activity}.ts`);
  }
});

/** The rooms inside workflows/, lowest first: each imports only rooms below it (docs/architecture.md). */
const WORKFLOW_ROOMS = ['base', 'state', 'run', 'people', 'turn'] as const;
const workflowRoomOf = (file: string) => {
  const [, room, rest] = file.split('/');
  return rest === undefined ? '(top)' : room!;
};

test('workflows/ has rooms: base, state, run, people, turn, each importing only the rooms below it, with agent-task.ts and index.ts on top', () => {
  const workflowFiles = [...FILES].filter((file) => roomOf(file) === 'workflows');
  expect(workflowFiles.filter((file) => workflowRoomOf(file) === '(top)').sort()).toEqual(['workflows/agent-task.ts', 'workflows/index.ts']);
  expect(new Set(workflowFiles.map(workflowRoomOf))).toEqual(new Set(['(top)', ...WORKFLOW_ROOMS]));
  const upward: string[] = [];
  for (const file of workflowFiles) {
    const level = WORKFLOW_ROOMS.indexOf(workflowRoomOf(file) as (typeof WORKFLOW_ROOMS)[number]);
    if (level < 0) continue;
    for (const target of files.get(file) ?? []) {
      if (roomOf(target) !== 'workflows') continue;
      const targetLevel = WORKFLOW_ROOMS.indexOf(workflowRoomOf(target) as (typeof WORKFLOW_ROOMS)[number]);
      if (targetLevel < 0 || targetLevel > level) upward.push(`${file} -> ${target}`);
    }
  }
  expect(upward).toEqual([]);
});
