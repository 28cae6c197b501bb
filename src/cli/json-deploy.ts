/**
 * What `deploy status|check|promote|rollback --json` prints, as zod schemas. The published JSON
 * Schemas are generated from these (src/cli/json-schemas.ts), and the checks at the bottom make tsc
 * refuse a schema that differs from the types the verb prints.
 */
import { z } from 'zod';
import type { CheckResult } from '../deploy/check-record';
import type { DeploymentView, RoutingChange } from '../deploy/deployment';
import { count, type Exact, type Jsonified } from './json-output';

const mode = z.enum(['strict', 'pinned']);
const ramping = z.strictObject({ buildId: z.string(), percentage: z.number() });

export const deploymentJson = z
  .strictObject({
    deploymentName: z.string(),
    current: z.string().optional(),
    ramping: ramping.optional(),
    builds: z.array(
      z.strictObject({
        buildId: z.string(),
        state: z.enum(['current', 'ramping', 'draining', 'drained', 'inactive']),
        rampPercentage: z.number().optional(),
        createdAt: z.string().optional(),
        currentSince: z.string().optional(),
        deactivatedAt: z.string().optional().meta({ description: 'When the build stopped being current or ramping (the newest is what `rollback` goes back to).' }),
        openTasks: count,
        agents: z.record(z.string(), count).meta({ description: 'Open tasks on this build, per agent.' }),
        check: z.strictObject({ passed: z.boolean(), checkedAt: z.string(), histories: count, mode }).optional().meta({ description: 'The last `deploy check` of this build run on this machine.' }),
      }),
    ),
    unversionedOpenTasks: count.meta({ description: 'Open tasks on no build.' }),
  })
  .meta({ title: 'Deployment', description: '`durable-agent deploy status --json`: the Worker Deployment, its builds and their open tasks.' });

export const deployCheckJson = z
  .strictObject({
    deploymentName: z.string(),
    buildId: z.string().optional(),
    bundle: z.string(),
    bundleSha256: z.string(),
    mode,
    checkedAt: z.string(),
    histories: count,
    open: count,
    closed: count,
    passed: z.boolean(),
    divergences: z.array(
      z.strictObject({
        taskId: z.string(),
        runId: z.string(),
        agent: z.string(),
        open: z.boolean(),
        pinnedTo: z.string().optional(),
        eventId: z.number().optional(),
        eventType: z.string().optional(),
        command: z.string().optional(),
        message: z.string(),
        blocking: z.boolean().meta({ description: "Whether this divergence refuses the build in the check's mode." }),
      }),
    ),
    clean: z.array(z.strictObject({ taskId: z.string(), runId: z.string(), events: count })),
    fetchMs: z.number(),
    replayMs: z.number(),
  })
  .meta({ title: 'DeployCheck', description: '`durable-agent deploy check BUNDLE_OR_DIR --json`: the new code replayed against histories; exit 1 unless `passed`.' });

const routing = z.strictObject({ current: z.string().optional(), ramping: ramping.optional() });

export const deployChangeJson = z
  .strictObject({
    deploymentName: z.string(),
    before: routing,
    after: routing,
    forced: z.boolean().optional().meta({ description: 'Whether the promote went ahead without a passing check (--force).' }),
    moved: z.array(z.strictObject({ taskId: z.string(), from: z.string(), to: z.string() })).optional(),
    kept: z.array(z.strictObject({ taskId: z.string(), build: z.string(), why: z.string() })).optional(),
  })
  .meta({ title: 'DeployChange', description: '`durable-agent deploy promote BUILD --json` and `deploy rollback --json`: the routing before and after.' });

// ---- tsc refuses a schema that differs from the type the verb prints.
const sameDeployment: Exact<z.infer<typeof deploymentJson>, Jsonified<DeploymentView>> = true;
const sameCheck: Exact<z.infer<typeof deployCheckJson>, Jsonified<CheckResult>> = true;
const sameChange: Exact<z.infer<typeof deployChangeJson>, Jsonified<RoutingChange>> = true;
void [sameDeployment, sameCheck, sameChange];
