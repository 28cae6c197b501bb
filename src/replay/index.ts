export { recordTask, type RecordTaskOptions } from './record-task';
export { checkRecording, loadRecording, sealRecording, contentHashOf, callsOf, RecordingError, RECORDING_FORMAT, RECORDING_VERSION, READABLE_RECORDING_VERSIONS } from './recording';
export type { Recording, RecordingBody, RecordedTurn, RecordedToolCall, RecordedOutcome, RecordedScript, ApprovalDecision } from './recording';
export { replayRecording, ReplayModelError, ReplayCannotRunError, type ReplayOptions, type ReplayResult } from './run-replay';
export { replayAgent, type ReplayAgentOptions } from './replay-agent';
export { diffTrajectories, renderDiff, summarize, outcomeOf, type TrajectoryDiff, type TrajectorySummary, type TurnDiff, type CallView } from './trajectory-diff';
export { checkExpectations, evalCases, evalExitCode, loadEvalDir, renderEvalTable, expectationsSchema, type EvalCase, type EvalRow, type EvalVerdict, type Expectations } from './eval';
