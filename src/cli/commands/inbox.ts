/** `durable-agent inbox`: the approvals web app; `inbox hash-password`: hashes for its approvers file. */
import { loadDecisionSigner, trustedKeyEntry } from '../../approvers';
import { TaskClient } from '../../client/task-client';
import { BLOB_STORE_ENV, openBlobStore } from '../../blobs/open-blob-store';
import { ApproverDirectory, ApproverFileError, defaultApproversFile } from '../../inbox/approver-directory';
import { loadLinkKey, UsedLinks } from '../../notifications/links';
import { hashPassword, newToken } from '../../inbox/secret-hash';
import { InboxServer } from '../../inbox/server';
import { intOption, parse } from '../args';
import { VERB_ARGS } from '../verb-args';
import { CliError, EXIT, usageError } from '../cli-error';
import { connectClient } from '../connect';
import { readHiddenLine } from '../read-secret';

export const inboxHelp = `durable-agent inbox [--port N] [--host ADDR] [--approvers FILE] [--public-url URL]
                    [--trusted-header NAME [--trusted-proxy ADDR]...] [--blob-store SPEC]
  The approvals web app: every pending approval and blocked task in the namespace; approve (with
  edited arguments), deny, unblock, message. Approvers sign in from FILE (default
  <state dir>/approvers.json). Default 127.0.0.1:7280. --public-url (or DURABLE_AGENT_INBOX_URL) is the
  address people open; notification links are signed with DURABLE_AGENT_LINK_KEY or
  <state dir>/inbox-link.key. --trusted-header lets an authenticating reverse proxy name the approver
  (off by default; only from --trusted-proxy addresses, default loopback). Long tool arguments are
  read from the workers' blob store (--blob-store, else ${BLOB_STORE_ENV}, else the state dir's).
durable-agent inbox hash-password [--token]
  Reads a password from stdin and prints its scrypt hash for the approvers file; with --token, makes
  a new access token and prints it (once) with its hash.
  See docs/inbox.md.`;

export async function inboxCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'hash-password') return hashPasswordCommand(argv.slice(1));
  const { values } = parse(argv, VERB_ARGS.inbox.options, VERB_ARGS.inbox.positionals);
  const port = intOption(values.port, 'port', 0) ?? 7280;
  if (port > 65535) throw usageError(`--port must be at most 65535, got ${port}`);
  const publicUrl = values['public-url'] ?? (process.env.DURABLE_AGENT_INBOX_URL || undefined);
  if (publicUrl !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(publicUrl);
    } catch {
      throw usageError(`--public-url must be a URL such as https://inbox.example.org, got "${publicUrl}"`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw usageError(`--public-url must be http(s), got "${publicUrl}"`);
  }
  if (values['trusted-proxy'] && !values['trusted-header']) throw usageError('--trusted-proxy needs --trusted-header NAME');
  if (values['trusted-header'] !== undefined && !/^[A-Za-z0-9-]{1,64}$/.test(values['trusted-header'])) {
    throw usageError(`--trusted-header must be a header name such as x-forwarded-user, got "${values['trusted-header']}"`);
  }
  let directory: ApproverDirectory;
  try {
    directory = ApproverDirectory.fromFile(values.approvers ?? defaultApproversFile());
  } catch (err) {
    if (err instanceof ApproverFileError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
  if (directory.size === 0) throw new CliError('the approvers file lists nobody: add approvers first (see docs/inbox.md)', EXIT.usage);
  // The inbox vouches for the people it signed in: each decision carries this signer's proof of
  // `by` and `roles` (workers trust its public key through DURABLE_AGENT_APPROVER_KEYS).
  const signer = loadDecisionSigner();
  let blobStore;
  try {
    blobStore = openBlobStore(values['blob-store']);
  } catch (err) {
    throw usageError((err as Error).message);
  }
  const connected = await connectClient(values);
  const client = new TaskClient(connected.client, connected.taskQueue, signer);
  const server = new InboxServer({
    client,
    directory,
    linkKey: loadLinkKey({ create: true })!,
    usedLinks: new UsedLinks(),
    blobStore,
    ...(publicUrl ? { publicUrl } : {}),
    ...(values['trusted-header'] ? { trustedHeader: { header: values['trusted-header'], ...(values['trusted-proxy'] ? { proxies: values['trusted-proxy'] } : {}) } } : {}),
  });
  const url = await server.start(port, values.host ?? '127.0.0.1');
  console.log(`inbox: ${url}${publicUrl && publicUrl !== url ? ` (public: ${publicUrl})` : ''}; ${directory.size} approver(s). Ctrl-C stops it.`);
  console.log(`inbox: decisions are signed with key ${trustedKeyEntry(signer)} (workers trust it with DURABLE_AGENT_APPROVER_KEYS)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.stop();
  await blobStore.close();
  await client.client.connection.close();
  return EXIT.ok;
}

async function hashPasswordCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, VERB_ARGS.inbox.subcommands['hash-password'].options, VERB_ARGS.inbox.subcommands['hash-password'].positionals);
  if (values.token) {
    const { token, hash } = newToken();
    console.log(`token (give it to the approver; it is not stored): ${token}`);
    console.log(`hash (put it in the approver's "tokens" list):     ${hash}`);
    return EXIT.ok;
  }
  const password = await readSecret('Password: ');
  if (password.length < 8) throw usageError('a password needs at least 8 characters');
  console.log(await hashPassword(password));
  return EXIT.ok;
}

/** One line from stdin; on a terminal, without echoing it. */
async function readSecret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) return readHiddenLine(prompt, stdin);
  let text = '';
  for await (const chunk of stdin) text += chunk;
  return text.split(/\r?\n/)[0] ?? '';
}
