/**
 * notify: a notice (an escalation, a confirm or block waiting on a person) in the worker's log and,
 * when a webhook is set, POSTed Slack-shaped with signed single-use inbox links. A long call's
 * arguments are a reference in the workflow's message: people get the arguments, read from the task's
 * stored content under the scope the notice names (history/stored-arguments.ts).
 */
import { Context } from '@temporalio/activity';
import { MARKER_PREFIX } from '../protocol/blob-marker';
import type { AgentActivities, NotifyInput } from '../protocol/activity-contracts';
import { classify } from '../errors/classify';
import { HttpStatusError } from '../errors/tool-failure';
import { readStoredArguments, taskBlobScope } from '../history/stored-arguments';
import { linkSettingsFromEnv, noticeWithArguments, webhookBody, type LinkSettings } from '../notifications/notification';
import type { ActivityDependencies } from './dependencies';
import { toApplicationFailure } from './failure';
import type { WorkerResources } from './worker-resources';

export function createNotify(worker: Pick<WorkerResources, 'store'>, deps: Pick<ActivityDependencies, 'webhookUrl'>): AgentActivities['notify'] {
  const webhookUrl = deps.webhookUrl ?? process.env.DURABLE_AGENT_WEBHOOK_URL;
  // Read on the first notice: DURABLE_AGENT_INBOX_URL and the link key shared with the inbox.
  let links: LinkSettings | null | undefined;
  const linkSettings = (): LinkSettings | undefined => {
    if (links === undefined) {
      try {
        links = linkSettingsFromEnv() ?? null;
      } catch (err) {
        // A wrong inbox setting must not stop notices: they go out without links, and the log says why.
        Context.current().log.error(`Notices carry no inbox links: ${(err as Error).message}`);
        links = null;
      }
    }
    return links ?? undefined;
  };
  /**
   * The task's blob scope: the notice's own, which must be the calling task's; a notice from a build
   * before notices carried it is answered from the task's history through the worker's client.
   */
  const noticeScope = (input: NotifyInput): Promise<string> => {
    const info = Context.current().info.workflowExecution;
    if (info?.workflowId !== input.taskId) return Promise.reject(new Error(`a notice for task ${input.taskId} came from another workflow`));
    if (input.scope === undefined) return taskBlobScope(Context.current().client, input.taskId);
    if (!input.scope.startsWith(`${input.taskId}/`)) return Promise.reject(new Error(`a notice for task ${input.taskId} named the scope of another task`));
    return Promise.resolve(input.scope);
  };

  return async (input) => {
    const notice = input.message.includes(MARKER_PREFIX) ? await noticeWithArguments(input, async (marker) => readStoredArguments(worker.store(), await noticeScope(input), marker)) : input;
    const line = `[${notice.level}] task ${notice.taskId} (${notice.agent}) ${notice.code}: ${notice.message}`;
    Context.current().log.warn(line);
    if (!webhookUrl) return;
    const res = await fetch(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Slack-compatible { text, blocks }; confirm and block notices link to the inbox (signed, single use).
      body: JSON.stringify(webhookBody(notice, line, linkSettings())),
      signal: AbortSignal.timeout(10_000),
    }).catch((err: Error) => {
      throw toApplicationFailure(classify(err), Context.current().info.attempt);
    });
    if (!res.ok) {
      throw toApplicationFailure(classify(new HttpStatusError(res.status, await res.text(), Object.fromEntries(res.headers))), Context.current().info.attempt);
    }
  };
}
