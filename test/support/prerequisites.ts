/**
 * A test that needs a program the machine may lack (Chromium, npm, docker-compose). Locally a missing
 * one skips the test with the reason in its name and a warning; in CI (CI=true) a skip would hide a
 * broken setup, so the test runs and fails, saying which command installs what is missing.
 */
export interface Prerequisite {
  /** What is missing, e.g. "no Chromium at /usr/bin/chromium"; undefined when it is there. */
  missing: string | undefined;
  /** The command that installs it, e.g. "apt-get install chromium". */
  install: string;
}

export const inCI = (): boolean => process.env.CI === 'true';

type TestFn = () => Promise<void>;

/** `test`, `test.skip` with the reason (locally), or a test that fails with the install command (CI). */
export function testNeeding(file: string, prerequisite: Prerequisite): (name: string, fn: TestFn, timeout?: number) => void {
  const { missing, install } = prerequisite;
  if (missing === undefined) return (name, fn, timeout) => test(name, fn, timeout);
  if (inCI()) {
    return (name) =>
      test(name, () => {
        throw new Error(`${file}: ${missing}; CI must have it: ${install}`);
      });
  }
  console.warn(`${file}: ${missing}: these tests are SKIPPED (install: ${install}).`);
  return (name, fn, timeout) => test.skip(`${name} [SKIPPED: ${missing}; install: ${install}]`, fn, timeout);
}
