/**
 * The task's message handlers: queries, the decision updates and their signal twins, and the
 * `message` signal. Decisions follow the rules in decisions.ts; a message is judged once the
 * run knows its approver gate (the ones that arrive earlier wait for it).
 */
import { log, setHandler } from '@temporalio/workflow';
import {
  approveSignal,
  approveUpdate,
  denySignal,
  denyUpdate,
  interruptSignal,
  messageSignal,
  statusQuery,
  transcriptQuery,
  modelConversationQuery,
  unblockSignal,
  unblockUpdate,
} from '../../protocol/definitions';
import type { MessageInput } from '../../protocol/task';
import { MESSAGE_NONCE_MEMORY, type ApproverGate } from '../run/approver-gate';
import { Decisions } from './decisions';
import { failAsUpdate, failAsUpdateAsync, rejectIf } from '../base/update-failures';
import { messageProblem } from '../base/input-checks';
import { describeAgentNow, type Run } from '../run/run-setup';
import type { People } from './people';
import { statusOf } from '../state/task-status';

export class TaskHandlers {
  /** Set once the manifest (with the worker's trusted keys) is known. */
  private gate: ApproverGate | undefined;
  /** Messages that arrived before the manifest: judged once it is known. */
  private readonly earlyMessages: { message: MessageInput; interrupt: boolean }[] = [];

  constructor(
    private readonly run: Run,
    private readonly people: People,
  ) {}

  register(): void {
    const { state } = this.run;
    const decisions = new Decisions({
      state,
      agent: this.run.input.agent,
      scope: this.run.scope,
      gate: () => this.gate,
      prepareToolCall: this.run.activities.prepareToolCall,
      decisionReceivedAt: this.run.activities.decisionReceivedAt,
      describeAgentNow: () => describeAgentNow(this.run),
      published: () => this.people.reblocked(),
    });
    setHandler(statusQuery, () => statusOf(state));
    setHandler(transcriptQuery, () => ({ system: state.manifest?.system ?? '', messages: state.messages }));
    // For a worker that does not hold the conversation a model call builds on (conversation-copies.ts).
    setHandler(modelConversationQuery, (call) => {
      const messages = this.run.sent.inFlight(call, state.messages);
      if (!messages) throw new Error(`model call ${String(call).slice(0, 20)} is not the one in flight`);
      return messages;
    });
    // Validators run before anything is written to history: a wrong or stale decision leaves no trace.
    setHandler(unblockUpdate, (request) => failAsUpdateAsync(() => decisions.unblock(request)), { validator: (request) => rejectIf(decisions.problem('unblock', request, Date.now())) });
    setHandler(approveUpdate, (request) => failAsUpdateAsync(() => decisions.approve(request)), { validator: (request) => rejectIf(decisions.problem('approve', request, Date.now())) });
    setHandler(denyUpdate, (request) => failAsUpdate(() => decisions.deny(request)), { validator: (request) => rejectIf(decisions.problem('deny', request, Date.now())) });
    // The same decisions as signals: recorded by the server even when no worker runs.
    setHandler(unblockSignal, (request) => decisions.fromSignal('unblock', request));
    setHandler(approveSignal, (request) => decisions.fromSignal('approve', request));
    setHandler(denySignal, (request) => decisions.fromSignal('deny', request));
    setHandler(messageSignal, (message) => this.onMessage(message, false));
    setHandler(interruptSignal, (message) => this.onMessage(message, true));
  }

  /**
   * A message, or an interrupt: a message that also cancels the model call in flight. A signal
   * cannot be refused, and a throw here would fail the workflow task: what is malformed is dropped.
   */
  private onMessage(message: MessageInput, interrupt: boolean): void {
    const { state } = this.run;
    const problem = messageProblem(message);
    if (problem) {
      log.warn(`Ignored a malformed ${interrupt ? 'interrupt' : 'message'} signal`, { problem });
      return;
    }
    try {
      const policy = state.manifest?.messagesWhileBusy ?? 'queue';
      const busy = state.phase === 'calling_model' || state.phase === 'running_tools' || state.phase === 'grading';
      if (!interrupt && policy === 'reject' && busy) {
        return state.recordUntakenDecision('message', message.by, 'refused', 'the task was busy: this agent takes messages only while it waits (send it again then, or interrupt)');
      }
      const taken = this.takeMessage(message, interrupt);
      if (taken && (interrupt || policy === 'interrupt') && this.run.steering.interrupt()) state.recordInterrupt(message.by);
    } catch (err) {
      log.warn('Ignored a message signal that could not be added', { error: String(err) });
    }
  }

  /** The run's approver gate is known: messages that waited for it are judged now. */
  gateKnown(gate: ApproverGate): void {
    this.gate = gate;
    for (const { message, interrupt } of this.earlyMessages.splice(0)) this.takeMessage(message, interrupt);
  }

  /** Whether the message joined the conversation (one that waits for the gate joins before the first model call). */
  private takeMessage(message: MessageInput, interrupt: boolean): boolean {
    const { state } = this.run;
    if (!this.gate) {
      this.earlyMessages.push({ message, interrupt });
      return false;
    }
    const identity = this.gate.messageIdentity(message, Date.now(), state.messageNonces, interrupt);
    if (identity.problem) {
      log.warn('A message was kept out of the conversation', { by: message.by, problem: identity.problem });
      state.refuseGuidance(message, identity);
      return false;
    }
    if (identity.verified && message.proof?.nonce) state.rememberNonce(message.proof.nonce, MESSAGE_NONCE_MEMORY);
    state.addGuidance(message, identity);
    return true;
  }
}
