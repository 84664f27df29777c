import type { ExecutionContext } from '@nestjs/common';
import type { IdempotencyCoordinator, RunRequest } from '../../coordinator';
import { InvalidRequestError } from '../../errors';
import type { Execution } from '../../execution';
import type { FingerprintInput } from '../../fingerprint';
import { HeaderName } from '../../header-name';
import { noteRequestIdentity, type RequestIdentity } from '../../request-identity';
import { disconnectSignal, requestDeadline } from '../http/http-request';
import type { IdempotentRoute } from '../idempotent-routes';
import type { IdempotencyTransport } from '../transport';
import { GraphqlCall } from './graphql-call';
import { toGraphqlError } from './graphql-error';
import { runGraphql } from './graphql-execution';
import { httpView } from './http-view';

/**
 * Each resolver call's reading of its arguments, made once and kept on its
 * context: a property, not a `WeakMap` entry, so a long-lived table does not
 * keep every call's objects alive past it (see `MemberList`).
 */
const CALL = Symbol('idempotency-chain.graphql-call');
type WithCall = ExecutionContext & { [CALL]?: GraphqlCall };

/**
 * GraphQL mutations (`@nestjs/graphql`, on Apollo or Mercurius): the key
 * from the HTTP request's `Idempotency-Key` header, the scope from that
 * request (see `httpView`), the fingerprint from the mutation's field name
 * and its resolved arguments - never the query text or the selection set,
 * so whitespace, aliases and what a retry selects do not change it. A
 * document with more than one mutation field under one key is refused: the
 * key names one effect. The resolver's return value is stored and replayed
 * as its result (see `runGraphql`); refusals are GraphQL errors (see
 * `toGraphqlError`). Nothing of `@nestjs/graphql` is imported: this adapter
 * reads the resolver's arguments as Nest hands them.
 */
export class GraphqlTransport implements IdempotencyTransport {
  /**
   * @param maxResponseBytes - the stored JSON (UTF-8 bytes) a mutation's
   * record may hold of its result or final error: the value or the error with
   * a few bytes of framing, a binary value such as a `Buffer` counted as its
   * JSON (about four times its bytes); past it, the caller still gets it and
   * the record stores a `result-not-stored` instead (see `runGraphql`).
   */
  constructor(
    private readonly coordinator: IdempotencyCoordinator,
    private readonly maxResponseBytes?: number,
  ) {}

  view(context: ExecutionContext): ExecutionContext {
    const call = new GraphqlCall(context);
    const view: WithCall = httpView(context, call);
    view[CALL] = call;
    return view;
  }

  unsupported(context: ExecutionContext): string | undefined {
    const call = callOf(context);
    if (call.isMutation) return undefined;
    return `a GraphQL ${call.info.parentType.name}.${call.info.fieldName} field cannot be protected, only a mutation's root field`;
  }

  /** The HTTP request's `Idempotency-Key`; none over a WebSocket, whose upgrade's key would be every operation's of the connection. */
  key(context: ExecutionContext): unknown {
    const call = callOf(context);
    return call.overWebSocket ? undefined : call.request?.headers[HeaderName.IdempotencyKey];
  }

  /**
   * The mutation's field name and its resolved arguments; refused when the
   * document holds other mutation fields, or the HTTP request is a batch of
   * operations (each runs under the one key: two identical charges would
   * run once and both be answered as done).
   */
  fingerprint(context: ExecutionContext, route: IdempotentRoute): FingerprintInput {
    const call = callOf(context);
    const { info, args, request } = call;
    const batch = request?.body;
    if (Array.isArray(batch) && batch.length > 1) {
      throw new InvalidRequestError(
        `A batched GraphQL request sent with an Idempotency-Key may hold one operation; this one holds ${batch.length}: ` +
          `send each under its own key (operation ${route.operation})`,
      );
    }
    const fields = call.rootFields();
    if (fields.length > 1) {
      throw new InvalidRequestError(
        `A GraphQL document sent with an Idempotency-Key may hold one mutation field; this one holds ${fields.length} ` +
          `(${fields.join(', ')}): send each under its own key (operation ${route.operation})`,
      );
    }
    return { method: 'GRAPHQL', path: `${info.parentType.name}.${info.fieldName}`, body: args };
  }

  deadline(context: ExecutionContext): number | undefined {
    const { request } = callOf(context);
    return request ? requestDeadline(request) : undefined;
  }

  identified(context: ExecutionContext, identity: RequestIdentity): void {
    const { request } = callOf(context);
    if (request) noteRequestIdentity(request, identity);
  }

  run(context: ExecutionContext, route: IdempotentRoute, request: RunRequest, invoke: (execution?: Execution) => unknown): unknown {
    const call = callOf(context);
    const { response } = call;
    // Only a request that waits needs to hear of a disconnect.
    if (response) request.signal = () => disconnectSignal(response);
    return runGraphql(this.coordinator, route, request, invoke, call, this.maxResponseBytes);
  }

  refusal(error: unknown, context: ExecutionContext): unknown {
    return toGraphqlError(error, callOf(context).response);
  }
}

/** The resolver call behind a context this adapter viewed (or one it meets for the first time). */
function callOf(context: WithCall): GraphqlCall {
  return (context[CALL] ??= new GraphqlCall(context));
}
