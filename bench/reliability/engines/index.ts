/** The engines the reliability benchmark runs, by name (add yours here). */
import type { Engine } from '../engine';
import { BareSdkEngine } from './bare-sdk';
import { DbosEngine } from './dbos';
import { DurableAgentEngine } from './durable-agent';
import { LangGraphEngine } from './langgraph';

export const ENGINES: Record<string, () => Engine> = {
  'durable-agent': () => new DurableAgentEngine(),
  'bare-sdk-loop': () => new BareSdkEngine(),
  'langgraph-sqlite': () => new LangGraphEngine(),
  'dbos-postgres': () => new DbosEngine(),
  // The peers without the idempotency keys their docs ask for: what a kill after a committed write costs them.
  'langgraph-sqlite-no-keys': () => new LangGraphEngine({ idempotencyKeys: false }),
  'dbos-postgres-no-keys': () => new DbosEngine({ idempotencyKeys: false }),
};

/** The engines a run without `--engines` compares (the no-keys variants only on request). */
export const DEFAULT_ENGINES = ['durable-agent', 'bare-sdk-loop', 'langgraph-sqlite', 'dbos-postgres'];
