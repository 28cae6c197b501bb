/**
 * The needle check of long tasks (issue 24): a fake Messages API model that reads a document one
 * page per turn and, asked at the end which number page 5 holds, answers right only when page 5's
 * line is in what it was sent (a compaction block, the durable summary or a memory read).
 */
import { effectiveMessages } from '../../src/testing/compaction-wire';
import { fakeTurns, type FakeReply, type RecordedRequest } from '../../src/testing/fake-messages-api';
import { SUMMARY_SYSTEM } from '../../src/models/summary-request';

export const NEEDLE = String(5 * 7919);
/** Page 5's line: unique to it among the first 300 pages (page 50's 395950 holds 39595 too, on a longer line). */
export const NEEDLE_LINE = `page 5: the quick brown fox jumps over the lazy dog ${NEEDLE}`;
export const RIGHT_ANSWER = `Page 5 holds ${NEEDLE}.`;
export const WRONG_ANSWER = 'I no longer have page 5.';
export const MEMORY_FILE = '/memories/page-5.md';

/** The summary call, told apart by its system prompt (sent as a cached text block). */
export const isSummaryCall = (record: RecordedRequest) => JSON.stringify(record.body.system ?? '').includes(JSON.stringify(SUMMARY_SYSTEM).slice(1, -1));

export interface NeedleReader {
  /** How the summary model summarises: `lines` keeps each distinct line once (the fact survives), `forgetful` keeps none. */
  summary: 'lines' | 'forgetful';
  /** Notes page 5's line in memory after reading it, and views the note before answering. */
  memory: boolean;
}

/** The fake's responder for a task that reads `pages` pages, then answers. */
export function needleReader(pages: number, how: NeedleReader): (record: RecordedRequest) => FakeReply {
  let read = 0;
  let noted = false;
  let viewed = false;
  return (record) => {
    if (isSummaryCall(record)) return fakeTurns.text(how.summary === 'lines' ? distinctLines(record) : 'Pages of a document were read.');
    if (how.memory && read === 6 && !noted) {
      noted = true;
      return fakeTurns.toolUse('toolu_note', 'memory', { command: 'create', path: MEMORY_FILE, file_text: `${NEEDLE_LINE}\n` });
    }
    if (read < pages) return fakeTurns.toolUse(`toolu_${read}`, 'big_read', { offset: read++ });
    if (how.memory && !viewed) {
      viewed = true;
      return fakeTurns.toolUse('toolu_view', 'memory', { command: 'view', path: MEMORY_FILE });
    }
    return answerFrom(record);
  };
}

/** A second task of the agent: views the memory first, then answers; it never reads the document. */
export function memoryOnlyReader(): (record: RecordedRequest) => FakeReply {
  let viewed = false;
  return (record) => {
    if (viewed) return answerFrom(record);
    viewed = true;
    return fakeTurns.toolUse('toolu_view', 'memory', { command: 'view', path: MEMORY_FILE });
  };
}

/** The final answer: right only when page 5's line is in what the fake was sent (the API reads nothing before a compaction block). */
export function answerFrom(record: RecordedRequest): FakeReply {
  return fakeTurns.text(JSON.stringify(effectiveMessages(record.body.messages)).includes(NEEDLE_LINE) ? RIGHT_ANSWER : WRONG_ANSWER);
}

/** A summary's length at most: what 2,048 output tokens hold. */
const SUMMARY_MAX_CHARS = 6_000;

/**
 * Each distinct line of the transcript once (the summary so far comes first in it), as a summary
 * keeps what each page said and not its repeats, cut where its output limit would cut it.
 */
function distinctLines(record: RecordedRequest): string {
  const first = (record.body.messages as { content: string | { text?: string }[] }[])[0]!.content;
  const transcript = typeof first === 'string' ? first : first.map((b) => b.text ?? '').join('\n');
  return [...new Set(transcript.split('\n').map((line) => line.slice(0, 120)))].join('\n').slice(0, SUMMARY_MAX_CHARS);
}
