/** Reflector key of the `@Idempotent` route metadata. */
export const IDEMPOTENT_METADATA = 'idempotency-chain:idempotent';

/** Payload field an RPC message carries its key in when its transport has no headers. */
export const RPC_KEY_FIELD = 'idempotencyKey';

/** `@nestjs/microservices`' pattern metadata key, named here so that package stays optional. */
export const RPC_PATTERN_METADATA = 'microservices:pattern';
