/**
 * The webhook body of a notice: Slack-compatible (`text` for clients that show one line, `blocks`
 * for those that render sections and buttons), with the notice's own fields kept for scripts. A
 * `confirm` or `block` notice carries a signed, single-use link to the task's page in the inbox
 * when the worker knows the inbox (DURABLE_AGENT_INBOX_URL and the shared link key).
 */
import { DEFAULT_LINK_TTL_MS, linkUrl, loadLinkKey, signLink } from './links';
import { MARKER_PREFIX, type Marker } from '../protocol/blob-marker';
import { replaceStoredArguments } from '../client/approval-arguments';
import type { NotifyInput } from '../protocol/activity-contracts';

/** A notice is what the workflow hands the notify activity (one definition, in the protocol). */
export type Notice = NotifyInput;

export interface LinkSettings {
  inboxUrl: string;
  key: Buffer;
  ttlMs: number;
}

/** The worker's link settings from its environment; undefined when no inbox is configured. */
export function linkSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): LinkSettings | undefined {
  const inboxUrl = env.DURABLE_AGENT_INBOX_URL;
  if (!inboxUrl) return undefined;
  const parsed = new URL(inboxUrl); // A wrong URL is a configuration error worth failing on.
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new RangeError(`DURABLE_AGENT_INBOX_URL must be http(s), got ${inboxUrl}`);
  const key = loadLinkKey({ create: true });
  if (!key) return undefined;
  const ttl = env.DURABLE_AGENT_LINK_TTL_MS === undefined ? DEFAULT_LINK_TTL_MS : Number(env.DURABLE_AGENT_LINK_TTL_MS);
  if (!Number.isInteger(ttl) || ttl < 1000) throw new RangeError(`DURABLE_AGENT_LINK_TTL_MS must be an integer >= 1000, got ${env.DURABLE_AGENT_LINK_TTL_MS}`);
  return { inboxUrl, key, ttlMs: ttl };
}

export interface WebhookBody extends Notice {
  text: string;
  blocks: unknown[];
  /** The signed link, when there is one. */
  link?: string;
}

const TITLES: Record<Notice['level'], string> = {
  inform: 'FYI',
  confirm: 'Approval needed',
  block: 'Task blocked: a person must step in',
};

export function webhookBody(notice: Notice, line: string, links?: LinkSettings, now = Date.now()): WebhookBody {
  const wantsLink = notice.level === 'confirm' || notice.level === 'block';
  const link =
    wantsLink && links
      ? linkUrl(links.inboxUrl, signLink(links.key, { taskId: notice.taskId, ...(notice.approvalId ? { approvalId: notice.approvalId } : {}) }, { ttlMs: links.ttlMs, now }))
      : undefined;
  // Slack's mrkdwn treats & < > specially; the message can quote a model's or a tool's words.
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: `${TITLES[notice.level]}: ${notice.agent}`.slice(0, 150) } },
    { type: 'section', text: { type: 'mrkdwn', text: esc(`Task ${notice.taskId} (${notice.code}): ${notice.message}`).slice(0, 3000) } },
  ];
  if (link) {
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', text: { type: 'plain_text', text: notice.level === 'confirm' ? 'Review the approval' : 'Open the task' }, url: link }],
    });
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `The link works once and expires in ${Math.round(links!.ttlMs / 3_600_000) || '<1'} h; sign-in required.` }] });
  }
  return { ...notice, text: link ? `${line}\n${link}` : line, blocks, ...(link ? { link } : {}) };
}

/** Characters of a call's arguments a notice quotes, at most (the inbox link shows them all). */
export const NOTICE_ARGUMENTS_CHARS = 1_200;

/**
 * The notice with each stored-arguments reference in its message replaced by the arguments
 * themselves (shortened to a line, every key kept): a person reads what they are asked to approve,
 * not a hash. `read` returns the stored JSON, checked against its hash; a reference it cannot read
 * becomes a plain sentence that sends the reader to the inbox.
 */
export async function noticeWithArguments(notice: Notice, read: (marker: Marker) => Promise<unknown>): Promise<Notice> {
  if (!notice.message.includes(MARKER_PREFIX)) return notice;
  return { ...notice, message: await replaceStoredArguments(notice.message, read, NOTICE_ARGUMENTS_CHARS) };
}
