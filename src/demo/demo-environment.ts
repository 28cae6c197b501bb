/**
 * What the built-in demo agent needs around it: a seeded workspace folder and an orders service
 * (started in-process unless an existing one is named).
 */
import path from 'node:path';
import { createDemoAgent, seedDemoWorkspace } from './demo-agent';
import type { AgentDefinition } from '../agents/define-agent';
import { stateDir } from '../server/state-dir';
import { OrdersService, parseFaultSpec } from '../testing/orders-service';
import { DurableAgentError } from '../errors/durable-agent-error';

/** A demo setting that cannot work (a fault spec it does not know, faults for a service it does not run): the caller's to fix. */
export class DemoSettingsError extends DurableAgentError {
  readonly code = 'demo_settings';
}

export interface DemoEnvironment {
  agent: AgentDefinition;
  workspaceDir: string;
  ordersUrl: string;
  stop(): Promise<void>;
}

export async function startDemoEnvironment(options: { workspaceDir?: string; ordersUrl?: string; faults?: string[] }): Promise<DemoEnvironment> {
  const workspaceDir = path.resolve(options.workspaceDir ?? path.join(stateDir(), 'workspace'));
  await seedDemoWorkspace(workspaceDir);
  let orders: OrdersService | undefined;
  let ordersUrl = options.ordersUrl;
  if (!ordersUrl) {
    orders = new OrdersService();
    for (const spec of options.faults ?? []) {
      let parsed;
      try {
        parsed = parseFaultSpec(spec);
      } catch (err) {
        throw new DemoSettingsError((err as Error).message);
      }
      orders.inject(parsed.fault, parsed.times);
    }
    ordersUrl = await orders.start();
  } else if (options.faults?.length) {
    throw new DemoSettingsError('--orders-fault applies to the built-in orders service; drop --orders-url to use it');
  }
  return {
    agent: createDemoAgent({ workspaceDir, ordersUrl }),
    workspaceDir,
    ordersUrl,
    stop: async () => orders?.stop(),
  };
}
