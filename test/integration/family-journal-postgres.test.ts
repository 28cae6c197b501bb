/**
 * The family's effect journal on the shared backend, on a real dev server: workers keep blobs and
 * the journal in PostgreSQL, as workers on several machines do. A forked lead that delegates the
 * same work again meets its origin's child's write there, and the journal's records are in the
 * table, sealed by intent under the family's root.
 */
import path from 'node:path';
import { defineAgent } from '../../src/agents/define-agent';
import { PostgresBlobStore } from '../../src/blobs/postgres-blob-store';
import { familyJournalPrefix } from '../../src/forks/effect-journal';
import { auditLog } from '../support/audit-log';
import { answer, callTool, familyNameOf, runInBackground, startHarness, statusWhen, type Harness } from '../support/harness';
import { startPostgres, type PostgresServer } from '../support/postgres';

jest.setTimeout(180_000);

let h: Harness;
let pg: PostgresServer;
let store: PostgresBlobStore;
let worker: { stop(): Promise<void> };
let auditFile: string;
const auditLines = (): string[] => auditLog(auditFile).lines();

beforeAll(async () => {
  [h, pg] = await Promise.all([startHarness(), startPostgres()]);
  store = new PostgresBlobStore({ url: pg.url, table: 'family_blobs' });
  auditFile = path.join(h.tmpDir, 'audit.log');
  const { append } = auditLog(auditFile);
  const clerk = defineAgent({
    name: 'clerk',
    description: 'files reports',
    system: 'You file reports.',
    tools: [append],
    policy: { write: 'allow' },
    model: { provider: 'scripted', script: h.script([callTool('append_audit_line', { line: 'filed report R-9' }), answer('filed')]) },
  });
  worker = runInBackground(await h.worker([defineAgent({ name: 'boss', system: 'You delegate.', tools: [], subagents: [clerk] }), clerk], { blobStore: store }));
});
afterAll(async () => {
  await worker?.stop();
  await store?.close();
  await Promise.all([h?.close(), pg?.stop()]);
});

test("on PostgreSQL: a forked lead's re-delegated child meets the origin's child's write and asks a person; the records are in the table under the family's root", async () => {
  const origin = h.taskId('boss');
  const lead = h.script([callTool('delegate_to_clerk', { task: 'File report R-9.' }), answer('filed by the clerk')]);
  await h.client.start({ agent: 'boss', prompt: 'Get R-9 filed.', model: { provider: 'scripted', script: lead } }, { taskId: origin });
  await h.client.result(origin);
  expect(auditLines()).toEqual(['filed report R-9']);
  const family = await familyNameOf(h, origin);
  const scopes = (await store.scopes()).filter((s) => s.startsWith(familyJournalPrefix(family)));
  expect(scopes).toHaveLength(1);
  // The claim is a record the primary key guards; its settled step a sealed blob beside it.
  expect(await store.records(scopes[0]!)).toHaveLength(1);
  expect(await store.ids(scopes[0]!)).toHaveLength(1);

  const fork = await h.client.fork(origin, 0, { blobStore: store });
  const child = `${fork.taskId}--clerk-1`;
  const [approval] = (await statusWhen(h, child, (s) => s.pendingApprovals.length === 1)).pendingApprovals;
  expect(approval!.reason).toMatch(new RegExp(`already ran in ${origin}--clerk-1 at turn 1`));
  await h.client.deny(child, { approvalId: approval!.id, by: 'operator', reason: 'filed once' });
  await h.client.result(fork.taskId);
  expect(auditLines()).toEqual(['filed report R-9']);
});
