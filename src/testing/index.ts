/**
 * The testing kit users import: a real local orders service that misbehaves on demand, the
 * scripted model, and the embedded dev server.
 */
export { OrdersService, parseFaultSpec, sampleOrders, FAULT_KINDS } from './orders-service';
export type { Order, OrdersFault, OrdersServiceOptions } from './orders-service';
export { ScriptedModel, scriptFile } from '../models/scripted-model';
export type { ModelScript } from '../models/scripted-model';
export { startDevServer, freePort } from '../server/dev-server';
export { FakeMessagesApi, fakeErrors, fakeTurns } from './fake-messages-api';
export type { FakeReply, RecordedRequest, FakeMessagesApiOptions, ErrorReply, Responder, FakeBlock, BilledUsage } from './fake-messages-api';
export { checkMessagesRequest, checkMessagesHeaders } from './messages-api-rules';
export { DOCUMENTED_MODELS } from './documented-models';
export { withFaults, toolFaults } from './tool-faults';
export type { FaultyTool, ToolFault } from './tool-faults';
export { evalRecordings } from './replay-eval';
export type { EvalReport } from './replay-eval';
export type { EvalRow, Expectations } from '../replay/eval';
