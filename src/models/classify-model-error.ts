/**
 * Classifies a Messages API failure by the SDK's error classes and status, into the same taxonomy
 * as tool errors.
 */
import Anthropic from '@anthropic-ai/sdk';
import { classify, isNamed, messageOf, type Classified } from '../errors/classify';
import { retryAfterMs } from '../errors/retry-after';
import { toolError } from '../protocol/tool-error';

export function classifyModelError(err: unknown): Classified {
  if (err instanceof Anthropic.APIConnectionError) {
    return { error: toolError('transient', 'api_connection', err.message, 'The model API could not be reached.') };
  }
  if (err instanceof Anthropic.APIError && typeof err.status === 'number') {
    const message = err.message;
    if (err.status === 429) {
      // A spend or quota limit will not lift by waiting a few seconds.
      if (/spend|credit balance|billing|quota/i.test(message)) {
        return { error: toolError('resource', 'spend_limit', message, 'A person must raise the API spend limit.') };
      }
      const wait = retryAfterMs(err.headers);
      const error = toolError('transient', 'rate_limited', message, 'Rate limited by the model API.');
      return wait === undefined ? { error } : { error, retryAfterMs: wait };
    }
    if (err.status === 400 && /prompt is too long|context window|too many tokens/i.test(message)) {
      return { error: toolError('resource', 'context_too_long', message, 'The conversation no longer fits the model.') };
    }
    if (err.status === 401 || err.status === 403) {
      return {
        error: toolError(
          'permanent',
          err.status === 401 ? 'authentication_failed' : 'permission_denied',
          message,
          'Check ANTHROPIC_API_KEY: the model API refused it.',
        ),
      };
    }
  }
  // A body cut off mid-JSON is a network problem here, not a broken contract: asking again helps.
  if (isNamed(err, 'SyntaxError')) {
    return { error: toolError('transient', 'truncated_response', `The model API's answer was cut off: ${messageOf(err)}`) };
  }
  return classify(err);
}
