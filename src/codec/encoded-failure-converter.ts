/**
 * The failure converter used when payloads are encrypted: a failure's message and stack trace move
 * out of the plain `message`/`stackTrace` fields (which Temporal stores as they are) into
 * `encodedAttributes`, a payload that the codecs then compress and encrypt. History shows
 * "Encoded failure"; a client with the keys (or the codec server) reads the real message.
 *
 * Loaded by path (DataConverter.failureConverterPath): by the worker and clients in Node, and by
 * the workflow bundle, so it must stay sandbox-safe: @temporalio/common only.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
