/**
 * A secret from stdin, never from argv (argv lands in shell history and `ps`): piped, the whole of
 * stdin less one trailing newline (so `printf %s "$TOKEN" |` and `echo "$TOKEN" |` give the same
 * value, and a multi-line PEM key stays whole); on a terminal, one line typed without echo.
 */
import { CliError, EXIT } from './cli-error';

export async function readSecretValue(prompt: string, stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  return readHiddenLine(prompt, stdin);
}

/** One line typed on a terminal without echo (Ctrl-C or Ctrl-D cancels: exit 1). */
export function readHiddenLine(prompt: string, stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (key: string) => {
      for (const ch of key) {
        if (ch === '\r' || ch === '\n') return done(() => resolve(text));
        if (ch === '\u0003' || ch === '\u0004') return done(() => reject(new CliError('cancelled', EXIT.failed)));
        if (ch === '\u007f') text = text.slice(0, -1);
        else text += ch;
      }
    };
    const done = (settle: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      settle();
    };
    stdin.on('data', onData);
  });
}
