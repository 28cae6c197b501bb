export { recordTask, type RecordTaskOptions } from './record-task';
export { checkRecording, loadRecording, sealRecording, contentHashOf, callsOf, RecordingError, RECORDING_FORMAT, RECORDING_VERSION } from './recording';
export type { Recording, RecordingBody, RecordedTurn, RecordedToolCall, RecordedOutcome, ApprovalDecision } from './recording';
export { replayRecording, ReplayModelError, type ReplayOptions, type ReplayResult } from './run-replay';
export { replayAgent, type ReplayAgentOptions } from './replay-agent';
export { diffTrajectories, renderDiff, summarize, outcomeOf, type TrajectoryDiff, type TrajectorySummary, type TurnDiff, type CallView } from './trajectory-diff';
export { checkExpectations, evalCases, loadEvalDir, renderEvalTable, expectationsSchema, type EvalCase, type EvalRow, type Expectations } from './eval';
