import { DefaultLogger, Runtime } from '@temporalio/worker';

let installed = false;

/** ERROR only: the tests fail tasks on purpose, and the SDK warns about each one. */
export function installQuietRuntime(): void {
  if (installed) return;
  installed = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Already installed in this process by another test file: keep that one.
  }
}
