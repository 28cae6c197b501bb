/**
 * Writes an assistant message as the Messages API's server-sent events (message_start,
 * content_block_start/delta/stop, message_delta, message_stop), the way `messages.stream()` reads
 * them. It can pace the deltas (a slow answer), cut the connection, or send an `error` event mid-way.
 */
import type http from 'node:http';

export interface StreamPacing {
  /** Characters per delta. Default 16. */
  chunkChars?: number;
  /** Pause before each delta, ms: a slow answer, so a worker can be killed mid-stream. */
  delayMs?: number;
  /** Destroy the connection after this many deltas: a stream cut mid-way. */
  cutAfterDeltas?: number;
  /** Send an `error` event after this many deltas instead of finishing (e.g. overloaded_error). */
  errorAfterDeltas?: { after: number; errorType?: string; message?: string };
  /** Stop sending after this many deltas and keep the stream open until the client goes away (a worker killed mid-stream). */
  holdAfterDeltas?: number;
  /** Told of each delta as it is written (its number from 1, and performance.now()): how a bench times the way to a subscriber. */
  onDelta?: (delta: number, sentAt: number) => void;
}

/** What became of a stream, live: deltas sent so far, and how it ended once it did. */
export interface StreamProgress {
  deltas: number;
  ended?: 'finished' | 'client_gone' | 'cut' | 'error_event';
}

export type WireBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'compaction'; content: string | null; encrypted_content: string | null; signature: string };

export interface WireMessage {
  id: string;
  model: string;
  content: WireBlock[];
  stop_reason: string;
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number; iterations?: unknown[] };
}

type Delta = Record<string, unknown>;

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function startOf(block: WireBlock): WireBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: '' };
    case 'thinking':
      return { type: 'thinking', thinking: '', signature: '' };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: {} };
    case 'redacted_thinking':
      return block;
    case 'compaction':
      // The summary comes in one compaction_delta; the signature with the block's start.
      return { type: 'compaction', content: null, encrypted_content: null, signature: block.signature };
  }
}

function deltasOf(block: WireBlock, size: number): Delta[] {
  switch (block.type) {
    case 'text':
      return chunks(block.text, size).map((text) => ({ type: 'text_delta', text }));
    case 'thinking':
      return [...chunks(block.thinking, size).map((thinking) => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature: block.signature }];
    case 'tool_use':
      return chunks(JSON.stringify(block.input ?? {}), size).map((partial_json) => ({ type: 'input_json_delta', partial_json }));
    case 'redacted_thinking':
      return [];
    case 'compaction':
      return [{ type: 'compaction_delta', content: block.content, encrypted_content: block.encrypted_content }];
  }
}

function outputCharsOf(delta: Delta): number {
  const text = delta.text ?? delta.partial_json ?? delta.thinking;
  return typeof text === 'string' ? text.length : 0;
}

/** Waits `ms`, or less when the connection closes first (a killed client, a stopped server). */
export function pause(res: http.ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once('close', done);
  });
}

/**
 * Streams `message` on `res`; resolves when done, cut, or the client went away, as `progress` then
 * says. `sent` counts the output characters (text, tool input JSON, thinking) sent: what a stream
 * that ended early is billed for.
 */
export async function writeMessageStream(
  res: http.ServerResponse,
  message: WireMessage,
  pacing: StreamPacing = {},
  progress: StreamProgress = { deltas: 0 },
  sent: { outputChars: number } = { outputChars: 0 },
): Promise<void> {
  const size = Math.max(1, pacing.chunkChars ?? 16);
  const send = (event: string, data: unknown) => {
    if (!res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${message.id}` });
  send('message_start', {
    type: 'message_start',
    message: {
      id: message.id,
      type: 'message',
      role: 'assistant',
      model: message.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...message.usage, output_tokens: 1 },
    },
  });
  send('ping', { type: 'ping' });
  for (const [index, block] of message.content.entries()) {
    send('content_block_start', { type: 'content_block_start', index, content_block: startOf(block) });
    for (const delta of deltasOf(block, size)) {
      if (pacing.delayMs) await pause(res, pacing.delayMs);
      if (res.destroyed) {
        progress.ended = 'client_gone';
        return;
      }
      send('content_block_delta', { type: 'content_block_delta', index, delta });
      sent.outputChars += outputCharsOf(delta);
      const deltas = ++progress.deltas;
      pacing.onDelta?.(deltas, performance.now());
      if (pacing.cutAfterDeltas !== undefined && deltas >= pacing.cutAfterDeltas) {
        res.socket?.destroy();
        progress.ended = 'cut';
        return;
      }
      const failAt = pacing.errorAfterDeltas;
      if (failAt && deltas >= failAt.after) {
        send('error', { type: 'error', error: { type: failAt.errorType ?? 'overloaded_error', message: failAt.message ?? 'Overloaded' } });
        res.end();
        progress.ended = 'error_event';
        return;
      }
      if (pacing.holdAfterDeltas !== undefined && deltas >= pacing.holdAfterDeltas) {
        if (!res.destroyed) await new Promise((resolve) => res.once('close', resolve));
        progress.ended = 'client_gone';
        return;
      }
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  }
  send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: {
      output_tokens: message.usage.output_tokens,
      input_tokens: message.usage.input_tokens,
      cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
      cache_read_input_tokens: message.usage.cache_read_input_tokens,
      ...(message.usage.iterations ? { iterations: message.usage.iterations } : {}),
    },
  });
  send('message_stop', { type: 'message_stop' });
  res.end();
  progress.ended = res.destroyed ? 'client_gone' : 'finished';
}
