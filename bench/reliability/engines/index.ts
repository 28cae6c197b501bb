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
};
