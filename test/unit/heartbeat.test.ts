/** A tool's own heartbeat details survive the keep-alive timer and are handed to the next attempt. */
import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { keepAlive, withHeartbeats } from '../../src/activities/heartbeat';
import { defineTool } from '../../src/tools/define-tool';
import { guardedCall } from '../../src/tools/guarded-call';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function environment(info: { heartbeatTimeoutMs?: number; heartbeatDetails?: unknown; attempt?: number }) {
  const env = new MockActivityEnvironment(info);
  const beats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => beats.push(details));
  return { env, beats };
}

test("the timer re-sends the tool's last heartbeat details and never blanks them", async () => {
  const { env, beats } = environment({ heartbeatTimeoutMs: 600 });
  await env.run(() =>
    withHeartbeats(Context.current(), async (beat) => {
      beat({ page: 1 });
      await sleep(450); // two timer beats at 200 ms
      beat({ page: 2 });
      await sleep(450);
    }),
  );
  expect(beats.length).toBeGreaterThanOrEqual(5);
  expect(beats).not.toContain(undefined);
  const firstTwo = beats.indexOf(beats.find((b) => (b as { page: number }).page === 2));
  expect(beats.slice(0, firstTwo).every((b) => (b as { page: number }).page === 1)).toBe(true);
  expect(beats.slice(firstTwo).every((b) => (b as { page: number }).page === 2)).toBe(true);
});

test("a retried attempt gets the previous attempt's heartbeat details, and they are kept until it reports its own", async () => {
  const { env, beats } = environment({ heartbeatTimeoutMs: 600, heartbeatDetails: { page: 7 }, attempt: 2 });
  let seen: unknown;
  await env.run(() =>
    withHeartbeats(Context.current(), async (beat, previous) => {
      seen = previous;
      await sleep(250); // the timer beats before the tool reports anything
      beat(); // "alive" without details keeps what was reported
    }),
  );
  expect(seen).toEqual({ page: 7 });
  expect(beats.length).toBeGreaterThanOrEqual(2);
  expect(beats.every((b) => JSON.stringify(b) === '{"page":7}')).toBe(true);
});

test('a first attempt gets no previous details, and without a heartbeat timeout no timer runs', async () => {
  const { env, beats } = environment({});
  const previous = await env.run(() => withHeartbeats(Context.current(), async (_beat, prev) => (await sleep(300), prev)));
  expect(previous).toBeUndefined();
  expect(beats).toEqual([]);
});

test('a long tool resumes from the page its last attempt reported, through ToolContext.previousHeartbeat', async () => {
  const pagesRead: number[] = [];
  const tool = defineTool({
    name: 'read_pages',
    description: 'Reads ten pages, reporting each as it goes.',
    input: z.object({}),
    output: z.object({ pages: z.number() }),
    effect: 'read',
    idempotent: true,
    run: async (_input, ctx) => {
      const from = ((ctx.previousHeartbeat as { page?: number } | undefined)?.page ?? 0) + 1;
      for (let page = from; page <= 10; page++) {
        pagesRead.push(page);
        ctx.heartbeat({ page });
      }
      return { pages: pagesRead.length };
    },
  });
  const { env, beats } = environment({ heartbeatTimeoutMs: 600, heartbeatDetails: { page: 6 }, attempt: 2 });
  const result = await env.run(() =>
    withHeartbeats(Context.current(), (beat, previous) =>
      guardedCall(
        tool,
        {},
        {
          idempotencyKey: 'wf:toolu_1',
          workflowId: 'wf',
          toolUseId: 'toolu_1',
          attempt: 2,
          signal: Context.current().cancellationSignal,
          heartbeat: beat,
          previousHeartbeat: previous,
        },
      ),
    ),
  );
  expect(result).toMatchObject({ kind: 'ok', output: { pages: 4 } });
  expect(pagesRead).toEqual([7, 8, 9, 10]);
  expect(beats.at(-1)).toEqual({ page: 10 });
});

test("a model call's progress is noted, not sent per token, and a retry does not re-send the last attempt's", async () => {
  const { env, beats } = environment({ heartbeatTimeoutMs: 600, heartbeatDetails: { outputChars: 99 }, attempt: 2 });
  await env.run(() =>
    withHeartbeats(
      Context.current(),
      async (_beat, _previous, { note }) => {
        await sleep(250); // the timer beats before any progress
        for (let i = 1; i <= 100; i++) note({ outputChars: i });
        await sleep(250);
      },
      { keepPrevious: false },
    ),
  );
  expect(beats[0]).toBeUndefined();
  expect(beats).not.toContainEqual({ outputChars: 99 });
  expect(beats.length).toBeLessThan(5);
  expect(beats.at(-1)).toEqual({ outputChars: 100 });
});

test('keepAlive: a short activity beats on the timer while it runs and returns what it returns', async () => {
  const { env, beats } = environment({ heartbeatTimeoutMs: 600 });
  const slow = keepAlive(async (input: { n: number }) => (await sleep(450), input.n * 2));
  expect(await env.run(() => slow({ n: 21 }))).toBe(42);
  expect(beats.length).toBeGreaterThanOrEqual(2);
});
