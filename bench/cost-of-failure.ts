/**
 * "Cost of failure": each seed scenario run twice by the same model, through the naive loop and
 * through the engine (a real dev server and worker), counting real tool executions (requests that
 * reached the orders service) and model calls.
 */
import { createDemoAgent } from '../src/demo/demo-agent';
import type { OrdersFault } from '../src/testing/orders-service';
import { statusWhen, type Harness } from '../test/support/harness';
import { naiveLoop } from './naive-loop';
import { ReactiveModel, type ReactiveModelOptions } from './reactive-model';

interface Scenario {
  name: string;
  model: ReactiveModelOptions;
  faults?: [OrdersFault, number][];
}

const search = (input: Record<string, unknown>) => ({ name: 'search_orders', input: { customer_id: 'C-9921', ...input } });

export const SCENARIOS: Scenario[] = [
  { name: 'truncated JSON (seed trace), model follows hints', model: { firstCall: search({}) }, faults: [[{ kind: 'truncate' }, Infinity]] },
  { name: 'truncated JSON (seed trace), model ignores hints', model: { firstCall: search({}), ignoresHints: true }, faults: [[{ kind: 'truncate' }, Infinity]] },
  { name: '503 twice, then success', model: { firstCall: search({ status: 'shipped' }) }, faults: [[{ kind: 'unavailable' }, 2]] },
  { name: '429 with Retry-After', model: { firstCall: search({ status: 'shipped' }) }, faults: [[{ kind: 'rate_limited', retryAfterSeconds: 1 }, 1]] },
  { name: 'permission denied (403)', model: { firstCall: search({ status: 'shipped' }) }, faults: [[{ kind: 'forbidden' }, Infinity]] },
  { name: "wrong enum 'shipping'", model: { firstCall: search({ status: 'shipping' }) } },
  { name: 'paginated result (has_more)', model: { firstCall: search({}) } },
  { name: 'empty first page', model: { firstCall: search({}) }, faults: [[{ kind: 'empty_first_page' }, 1]] },
  { name: 'duplicate read', model: { firstCall: search({ status: 'shipped' }), doubleCheck: true } },
];

export interface CostRow {
  scenario: string;
  naive: { toolExecutions: number; modelCalls: number };
  engine: { toolExecutions: number; modelCalls: number; outcome: string };
}

export async function measureCostOfFailure(h: Harness): Promise<CostRow[]> {
  const rows: CostRow[] = [];
  for (const scenario of SCENARIOS) {
    const arm = (faults: Scenario['faults'] = []) => {
      h.orders.clearFaults();
      for (const [fault, times] of faults) h.orders.inject(fault, times);
      return h.orders.requests.length;
    };

    let before = arm(scenario.faults);
    const naiveModel = new ReactiveModel(scenario.model);
    const agent = createDemoAgent({ workspaceDir: h.workspaceDir, ordersUrl: h.orders.url });
    const naive = await naiveLoop(agent, naiveModel, 'Summarise the orders of C-9921.');
    const naiveExecutions = h.orders.requests.length - before;

    before = arm(scenario.faults);
    const engineModel = new ReactiveModel(scenario.model);
    const worker = await h.worker([agent], { models: { bench: engineModel } });
    const taskId = h.taskId('cost');
    const status = await worker.runUntil(async () => {
      await h.client.start({ agent: 'demo', prompt: 'Summarise the orders of C-9921.', model: { provider: 'custom', name: 'bench' } }, { taskId });
      const s = await statusWhen(h, taskId, (x) => ['completed', 'blocked', 'failed'].includes(x.agentStatus), 120_000);
      if (s.agentStatus === 'blocked') await h.client.handle(taskId).terminate('benchmark: blocked for a person');
      return s;
    });
    rows.push({
      scenario: scenario.name,
      naive: { toolExecutions: naiveExecutions, modelCalls: naive.modelCalls },
      engine: {
        toolExecutions: h.orders.requests.length - before,
        modelCalls: engineModel.calls,
        outcome: status.agentStatus === 'blocked' ? `blocked (${status.blocked?.code})` : (status.result?.outcome ?? status.agentStatus),
      },
    });
  }
  h.orders.clearFaults();
  return rows;
}

export function costTable(rows: CostRow[]): string {
  const lines = ['| seed scenario | naive loop: tool executions | naive loop: model calls | engine: tool executions | engine: model calls | engine outcome |', '|---|---:|---:|---:|---:|---|'];
  for (const r of rows) {
    lines.push(`| ${r.scenario} | ${r.naive.toolExecutions} | ${r.naive.modelCalls} | ${r.engine.toolExecutions} | ${r.engine.modelCalls} | ${r.engine.outcome} |`);
  }
  return lines.join('\n');
}
