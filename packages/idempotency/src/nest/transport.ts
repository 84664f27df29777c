import type { ExecutionContext } from '@nestjs/common';
import type { RunRequest } from '../coordinator';
import type { Execution } from '../execution';
import type { FingerprintInput } from '../fingerprint';
import type { RequestIdentity } from '../request-identity';
import type { IdempotentRoute } from './idempotent-routes';

/**
 * What differs between the transports an `@Idempotent` handler can be
 * called over (HTTP, microservice messages, GraphQL mutations; see `http/`,
 * `rpc/` and `graphql/`): the
 * runner decides everything else once, for all of them. One adapter per
 * Nest context type.
 */
export interface IdempotencyTransport {
  /**
   * The context every other member, the route's scope resolver and the
   * runner see for this call, when this transport shows it otherwise (a
   * GraphQL resolver's, whose `switchToHttp()` is the HTTP request it came
   * over); without this member, the context as Nest made it.
   */
  view?(context: ExecutionContext): ExecutionContext;
  /**
   * Why this call cannot be protected, when its transport's kind of call
   * (a Kafka message) is not supported: `@Idempotent` then throws a
   * `TypeError` saying so, never runs the handler unprotected.
   */
  unsupported?(context: ExecutionContext): string | undefined;
  /** The raw key the call carries (validated by the runner); `undefined` or `null` when it carries none. */
  key(context: ExecutionContext): unknown;
  /** What the call's fingerprint is made of (see `requestFingerprint`), its whole body: the route picks its fields. */
  fingerprint(context: ExecutionContext, route: IdempotentRoute): FingerprintInput;
  /** When the caller stops waiting (epoch ms), if it says. */
  deadline(context: ExecutionContext): number | undefined;
  /** The call is identified: keep it where the handler's own outbound calls find it, if this transport can. */
  identified(context: ExecutionContext, identity: RequestIdentity): void;
  /**
   * Claim the request's key, run `invoke` under the execution and store its
   * outcome as this transport answers it, or replay the stored one.
   */
  run(context: ExecutionContext, route: IdempotentRoute, request: RunRequest, invoke: (execution?: Execution) => unknown): unknown;
  /** A library error as this transport answers it, to be thrown; anything else as it is. */
  refusal(error: unknown, context: ExecutionContext): unknown;
}
