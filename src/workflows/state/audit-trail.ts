/**
 * The task's audit trail: events (the live feed of `status` and `watch`), escalations, people's
 * decisions and approval records. Each list keeps its newest `auditWindow` entries in state; the
 * older ones wait in `overflow` until the workflow archives them to the blob store between turns.
 */
import { STATUS_EVENT_WINDOW, type ApprovalRecord, type Decision, type Escalation, type TaskEvent, type TaskEventKind } from '../../protocol/task';
import type { TaskLimits } from '../../rules/task-limits';

export class AuditTrail {
  readonly escalations: Escalation[] = [];
  readonly approvals: ApprovalRecord[] = [];
  readonly decisions: Decision[] = [];
  /** Markers of audit entries archived to the blob store, oldest first (`status --all` reads them). */
  readonly archive: string[] = [];
  /** Audit entries that left state and wait to be archived. */
  overflow: { kind: string; entry: unknown }[] = [];
  events: TaskEvent[] = [];
  eventCount = 0;

  constructor(
    private readonly limits: TaskLimits,
    private readonly now: () => string,
    private readonly turn: () => number,
  ) {}

  record(kind: TaskEventKind, detail: string, extra: { tool?: string; toolUseId?: string; credentialsOf?: string } = {}): void {
    this.eventCount += 1;
    this.events.push({ seq: this.eventCount, at: this.now(), kind, turn: this.turn(), ...extra, detail });
    // Keep memory bounded on long tasks; the full story is in Temporal's history.
    this.spillEvents();
  }

  /** Keeps the newest `auditWindow` entries of an audit list in state; older ones wait in `overflow` for the store. */
  bound<T>(kind: string, list: T[], keep: (entry: T) => boolean = () => false): void {
    let excess = list.length - this.limits.auditWindow;
    for (let i = 0; excess > 0 && i < list.length; ) {
      if (keep(list[i]!)) {
        i++;
        continue;
      }
      this.overflow.push({ kind, entry: list.splice(i, 1)[0] });
      excess--;
    }
  }

  /** Events beyond the window a snapshot carries wait for the archive instead of being dropped. */
  spillEvents(): void {
    const keep = Math.min(STATUS_EVENT_WINDOW, this.limits.auditWindow);
    if (this.events.length <= keep) return;
    for (const entry of this.events.splice(0, this.events.length - keep)) this.overflow.push({ kind: 'event', entry });
  }

  /** Audit entries waiting to be archived, taken out of state. */
  takeOverflow(): { kind: string; entry: unknown }[] {
    const taken = this.overflow;
    this.overflow = [];
    return taken;
  }

  /** The events a snapshot carries into the next run. */
  carriedEvents(): TaskEvent[] {
    return this.events.slice(-Math.min(STATUS_EVENT_WINDOW, this.limits.auditWindow));
  }
}
