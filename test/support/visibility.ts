/**
 * Temporal's visibility (list queries) is eventually consistent: a row lags the workflow it shows.
 * A test reads it until what it expects is there, and fails with the last read when it never is.
 */
export async function listedWhen<T>(what: string, read: () => Promise<T>, consistent: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (consistent(value)) return value;
    if (Date.now() > deadline) throw new Error(`visibility never showed ${what}; last read: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
