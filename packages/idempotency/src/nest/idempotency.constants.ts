/** Reflector key of the `@Idempotent` route metadata. */
export const IDEMPOTENT_METADATA = 'idempotency-chain:idempotent';

/** Payload field an RPC message carries its key in when its transport has no headers. */
export const RPC_KEY_FIELD = 'idempotencyKey';

/** `@nestjs/microservices`' pattern metadata key, named here so that package stays optional. */
export const RPC_PATTERN_METADATA = 'microservices:pattern';

/** Nest's route metadata keys, named here so no deep import of `@nestjs/common` is needed. */
export const NEST_METADATA = {
  path: 'path',
  routeArguments: '__routeArguments__',
  responsePassthrough: '__responsePassthrough__',
  sse: '__sse__',
} as const;

/** `@nestjs/graphql`'s resolver metadata keys (`@Mutation` sets both on a method), named here so that package stays optional. */
export const GRAPHQL_METADATA = {
  resolverType: 'graphql:resolver_type',
  resolverName: 'graphql:resolver_name',
} as const;
