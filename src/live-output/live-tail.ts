/**
 * The last characters of the answer streaming in now, read from the task's live output: what
 * `watch` shows beside the model's progress. It keeps its place in the log, so each update reads
 * only what is new; a new call or a retried attempt starts the tail over.
 */
import type { LiveOutputLog, LiveStream } from './live-output-log';

const TAIL_CHARS = 300;

export class LiveTail {
  private from = 0;
  private current = '';
  private broken = false;
  private stream: LiveStream | undefined;

  /** `streamOf`: the stream of the task being watched (asked once: the task now holding the id). */
  constructor(
    private readonly log: LiveOutputLog,
    private readonly streamOf: () => Promise<LiveStream>,
  ) {}

  get text(): string {
    return this.current;
  }

  /** Reads what is new. A log that cannot be read leaves the tail empty for good (a nicety, never an error for watch). */
  async update(): Promise<string> {
    if (this.broken) return '';
    try {
      this.stream ??= await this.streamOf();
      for (;;) {
        const page = await this.log.read(this.stream, this.from);
        for (const event of page) {
          this.from = event.offset + 1;
          if (event.kind === 'call_started') this.current = '';
          else if (event.kind === 'text') this.current = (this.current + event.text).slice(-TAIL_CHARS);
          else if (event.kind === 'tool_use') this.current = `${this.current} -> ${event.name} `.slice(-TAIL_CHARS);
          else if (event.kind === 'tool_input') this.current = (this.current + event.json).slice(-TAIL_CHARS);
        }
        if (page.length === 0) return this.current;
      }
    } catch {
      this.broken = true;
      this.current = '';
      return '';
    }
  }
}
