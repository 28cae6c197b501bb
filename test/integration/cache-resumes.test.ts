/**
 * Resumes that keep the prompt cache: after a worker SIGKILL, a continue-as-new, a fork and a
 * child's wake, each call sends the prompt its task's previous call wrote to the cache, byte for
 * byte up to that call's last breakpoint, and (but for a child's wake, whose lead has its own
 * prompt) the uninterrupted run's prompt; so the strict fake, which bills caching by
 * byte-identical prefix (prompt-cache.ts), reads as much from the cache as without the resume.
 */
import { CacheResumeBench, cacheReadShare, prefixBreak, RESUME_KINDS, resumeBreaks, type ResumeRun } from '../support/cache-resumes';
import { useHarness } from '../support/harness';

const h = useHarness();
let bench: CacheResumeBench;
let plain: ResumeRun;

beforeAll(async () => {
  bench = new CacheResumeBench(h);
  plain = await bench.runUninterrupted();
}, 300_000);

test("the uninterrupted run reads each call's prompt from the cache but for the turn in between", () => {
  expect(plain.rejected).toEqual([]);
  expect(plain.after.requests).toHaveLength(bench.options.turns + 1);
  const calls = plain.after.requests;
  for (let i = 1; i < calls.length; i++) expect(prefixBreak(calls[i - 1]!, calls[i]!)).toBeUndefined();
  expect(cacheReadShare(plain.after)).toBeGreaterThan(0.6);
});

test.each(RESUME_KINDS)(
  'after a %s, every call sends the prefix the call before it cached, and reads as much from the cache as the uninterrupted run',
  async (kind) => {
    const run = await bench.run(kind);
    expect(run.rejected).toEqual([]);
    expect(run.after.requests.length).toBeGreaterThan(2);
    expect(resumeBreaks(run)).toEqual([]);
    const share = cacheReadShare(run.after);
    const base = cacheReadShare(run.baseline);
    console.log(`${kind}: cache-read share ${share.toFixed(3)} against ${base.toFixed(3)} uninterrupted`);
    expect(share).toBeGreaterThanOrEqual(0.9 * base);
  },
  300_000,
);
