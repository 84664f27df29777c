/** Injection token of the queue's validated configuration (`QueueConfig`). */
export const QUEUE_CONFIG = Symbol('QUEUE_CONFIG');
