/**
 * The parts of amqplib (which ships no types) the verifier uses: its promise API for
 * the verifier's own connection, and its frame codec, which its connection reads the
 * wire with: the queue proxy reads the consumer's connection with it rather than
 * parsing AMQP 0-9-1 by hand. Only the members used are declared.
 */
declare module 'amqplib' {
  /** Message properties, as amqplib publishes them and as a decoded content header names them. */
  export interface PublishOptions {
    contentType?: string;
    contentEncoding?: string;
    headers?: Record<string, unknown>;
    deliveryMode?: number;
    priority?: number;
    correlationId?: string;
    replyTo?: string;
    expiration?: string;
    messageId?: string;
    timestamp?: number;
    type?: string;
    userId?: string;
    appId?: string;
  }
  export interface Channel {
    checkQueue(queue: string): Promise<{ queue: string; messageCount: number; consumerCount: number }>;
    deleteQueue(queue: string): Promise<{ messageCount: number }>;
    close(): Promise<void>;
  }
  export interface ConfirmChannel extends Channel {
    sendToQueue(queue: string, content: Buffer, options?: PublishOptions): boolean;
    waitForConfirms(): Promise<void>;
  }
  export interface ChannelModel {
    createChannel(): Promise<Channel>;
    createConfirmChannel(): Promise<ConfirmChannel>;
    close(): Promise<void>;
    on(event: 'error' | 'close', listener: (error?: Error) => void): this;
  }
  /** Socket options for the connection; `noDelay` sets TCP_NODELAY. */
  export interface SocketOptions {
    noDelay?: boolean;
  }
  export function connect(url: string, socketOptions?: SocketOptions): Promise<ChannelModel>;
}

declare module 'amqplib/lib/frame' {
  /** One frame cut from the front of `bin`, with what follows it; `false` while the frame is incomplete. */
  export function parseFrame(bin: Buffer): false | { type: number; channel: number; size: number; payload: Buffer; rest: Buffer };
  /** A method frame (`id`, `fields`), a content header (`id` 60, `size`, `fields`: the properties), a body (`content`) or a heartbeat. */
  export function decodeFrame(frame: { type: number; channel: number; payload: Buffer }): {
    id?: number;
    channel: number;
    size?: number;
    fields?: Record<string, unknown>;
    content?: Buffer;
  };
}

declare module 'amqplib/lib/defs' {
  export const BasicDeliver: number;
  export const BasicAck: number;
  export const BasicNack: number;
  export const BasicReject: number;
  export const BasicProperties: number;
  export const ChannelClose: number;
  export const ChannelCloseOk: number;
}
