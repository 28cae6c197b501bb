/**
 * Client connections that can read large histories.
 *
 * @temporalio/client means to raise gRPC's receive limit to 128 MB, but sets the channel argument
 * without its `grpc.` prefix, so gRPC ignores it and keeps its 4 MB default: one history page above
 * 4 MB (a long task's run holds several) fails with RESOURCE_EXHAUSTED after the client's retries.
 * Every client connection of this project goes through here and sets the real argument.
 */
import { Connection, type ConnectionOptions } from '@temporalio/client';

/** The largest gRPC message a client accepts: a page of history, a describe, a query answer. */
export const MAX_RECEIVE_MESSAGE_BYTES = 128 * 1024 * 1024;

export function clientConnectionOptions(options: ConnectionOptions = {}): ConnectionOptions {
  return {
    ...options,
    channelArgs: { 'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES, ...options.channelArgs },
  };
}

export function connectClient(options: ConnectionOptions = {}): Promise<Connection> {
  return Connection.connect(clientConnectionOptions(options));
}
