/**
 * Where one microservice transport carries a message's `Idempotency-Key`
 * outside its payload: its properties, headers, user properties or
 * metadata. A transport with nowhere to carry it (Nest's Redis transport)
 * needs no entry: its key travels in the payload's `idempotencyKey` field,
 * which every message may use.
 */
export interface RpcTransportKey {
  /** The transport, as Nest names it (`RMQ`, `NATS`, ...). */
  readonly transport: string;
  /**
   * The key as this transport's message context carries it (a string, or
   * bytes read as Latin-1); `undefined` when the context is another
   * transport's, or this message carries none.
   */
  keyOf(context: object): unknown;
}
