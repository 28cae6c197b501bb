/**
 * What a person's process and the harness do with a DBOS run from outside it, through DBOSClient
 * (DBOS's client for processes that run no workflows): read the outcome and the pending approval,
 * and send a decision. Loaded by path from bench/reliability/engines/dbos.ts, because the SDK lives
 * in bench/peer's own packages.
 */
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { APPROVAL_EVENT, decisionTopic, type ApprovalRequest } from './dbos-agent';

export interface DbosRunClient {
  /** The workflow's end, or undefined while it runs. */
  outcome(): Promise<{ status: 'answered'; text: string } | { status: 'failed'; error: string } | undefined>;
  pendingApproval(): Promise<ApprovalRequest | undefined>;
  /** Stored in PostgreSQL at once; the workflow's `recv` takes it whenever a worker runs it. */
  decide(toolUseId: string, approve: boolean): Promise<void>;
  close(): Promise<void>;
}

const FAILED = new Set(['ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED']);

export async function openDbosRunClient(systemDatabaseUrl: string, workflowId: string): Promise<DbosRunClient> {
  const client = await DBOSClient.create({ systemDatabaseUrl });
  return {
    async outcome() {
      const status = await client.getWorkflow(workflowId);
      if (status?.status === 'SUCCESS') return { status: 'answered', text: String(status.output ?? '') };
      if (status && FAILED.has(status.status)) return { status: 'failed', error: `${status.status}: ${String((status.error as Error | undefined)?.message ?? status.error ?? '')}` };
      return undefined;
    },
    async pendingApproval() {
      return (await client.getEvent<ApprovalRequest | null>(workflowId, APPROVAL_EVENT, { timeoutSeconds: 0 })) ?? undefined;
    },
    async decide(toolUseId, approve) {
      // The idempotency key makes a repeated decision (a person clicking twice) one message.
      await client.send(workflowId, { approve }, decisionTopic(toolUseId), `decision-${workflowId}-${toolUseId}`);
    },
    close: () => client.destroy(),
  };
}
