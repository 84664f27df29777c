/**
 * The names and messages of the `node:diagnostics_channel` channels the
 * coordinator publishes on (`@idempotency-chain/idempotency/diagnostics-channel`).
 * Publishing needs nothing from here: it is always on, and a subscriber
 * needs only the names, which this entry spells for TypeScript.
 */
export { IdempotencyChannel } from '../diagnostics-channels';
export type { ClaimMessage } from '../diagnostics-channels';
