/** The engines the reliability benchmark runs, by name (add yours here). */
import type { Engine } from '../engine';
import { BareSdkEngine } from './bare-sdk';
import { DurableAgentEngine } from './durable-agent';

export const ENGINES: Record<string, () => Engine> = {
  'durable-agent': () => new DurableAgentEngine(),
  'bare-sdk-loop': () => new BareSdkEngine(),
};
