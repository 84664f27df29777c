import type { Problem } from '../problem-details';

/**
 * One microservice transport, where its handling of a message differs from
 * the others': which message contexts are its own, where it carries a
 * message's `Idempotency-Key` outside the payload (its properties, headers,
 * user properties or metadata) and, where its callers expect errors in its
 * own terms (gRPC statuses), how a refusal is sent and what a handler's
 * error says of how the call ended. A message of no listed transport
 * carries its key in the payload's `idempotencyKey` field, which every
 * message may use.
 */
export interface MicroserviceTransport {
  /** The transport, as Nest names it (`RMQ`, `NATS`, ...). */
  readonly transport: string;
  /** Whether a handler's RPC context (`switchToRpc().getContext()`) is this transport's. */
  owns(context: object): boolean;
  /**
   * The key as this transport's message carries it (a string, every value
   * of a repeated entry, or bytes read as Latin-1); `undefined` when it
   * carries none. Asked only of a context this transport owns; a transport
   * without it carries the key only in the payload.
   */
  keyOf?(context: object): unknown;
  /**
   * Why `@Idempotent` refuses this transport's messages, when it does: a
   * transport whose redelivery was never shown to leave one execution per
   * key is refused (a `TypeError` at the first message), never silently
   * unprotected.
   */
  readonly unsupported?: string;
  /**
   * A refusal of this package (no key, a reused key, the store down) as the
   * payload of the `RpcException` the caller receives; without this
   * member, the problem document.
   */
  refusal?(problem: Problem, context: object): object;
  /**
   * The HTTP status a handler's error stands for when it carries none of
   * its own (an `HttpException`'s, an `RpcException` payload's `status`),
   * for the operation's `isFinal` to decide on; `undefined` when it says none.
   */
  statusOf?(error: unknown): number | undefined;
  /** A handler's final error as it can be stored and thrown again on replay; without this member, the error as thrown. */
  storable?(error: unknown): unknown;
  /**
   * Calls `listener` once the caller of the call whose handler got `args`
   * went away (cancelled, or past its deadline), at once if it already
   * has: a stream of values then stops and releases its key (see `heldStream`).
   */
  whenGone?(args: unknown[], listener: () => void): void;
}
