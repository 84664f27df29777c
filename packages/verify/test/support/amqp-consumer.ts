/** A message as amqplib hands it to a consumer: the parts the queue proxy's tests read. */
export interface Message {
  content: Buffer;
  fields: { deliveryTag: number; redelivered: boolean };
}

/** The parts of amqplib's channel the queue proxy's tests drive as a consumer (the verifier's declarations leave them out). */
export interface ConsumerChannel {
  assertQueue(queue: string, options: { durable: boolean }): Promise<unknown>;
  checkQueue(queue: string): Promise<{ messageCount: number }>;
  prefetch(count: number): Promise<unknown>;
  consume(queue: string, onMessage: (message: Message | null) => void): Promise<unknown>;
  ack(message: Message, allUpTo?: boolean): void;
  nack(message: Message, allUpTo: boolean, requeue: boolean): void;
  close(): Promise<void>;
  on(event: 'error' | 'close', listener: () => void): unknown;
  sendToQueue(queue: string, content: Buffer, options?: { headers?: Record<string, string> }): boolean;
  deleteQueue(queue: string): Promise<unknown>;
}
