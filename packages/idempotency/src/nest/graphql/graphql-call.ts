import type { ServerResponse } from 'node:http';
import type { ExecutionContext } from '@nestjs/common';
import type { HttpRequestLike } from '../http/http-request';
import { rawResponse } from '../http/http-request';
import type { OutputTypeLike } from './graphql-snapshot';

/**
 * The parts of graphql-js's `GraphQLResolveInfo` this adapter reads
 * (structural: `graphql` stays optional for apps without it).
 */
export interface ResolveInfoLike {
  readonly fieldName: string;
  /** The field's declared type: what a stored answer is read through (see `snapshotOf`). */
  readonly returnType: OutputTypeLike;
  readonly parentType: { readonly name: string };
  readonly schema: { getMutationType(): { readonly name: string } | null | undefined };
  readonly operation: { readonly operation: string; readonly selectionSet: SelectionSetLike };
  readonly fragments: Record<string, { readonly selectionSet: SelectionSetLike } | undefined>;
}

interface SelectionSetLike {
  readonly selections: ReadonlyArray<
    | { readonly kind: 'Field'; readonly name: { value: string }; readonly alias?: { value: string } }
    | { readonly kind: 'InlineFragment'; readonly selectionSet: SelectionSetLike }
    | { readonly kind: 'FragmentSpread'; readonly name: { value: string } }
  >;
}

/**
 * One resolver call of a GraphQL operation, as Nest hands it (`[root, args,
 * context, info]`), with the HTTP request and response it came over: the
 * GraphQL context's `req` (Apollo, whose response on Express is `req.res`;
 * on Fastify it has none) or `reply` (Mercurius, whose request is
 * `reply.request`).
 */
export class GraphqlCall {
  readonly args: Record<string, unknown>;
  readonly info: ResolveInfoLike;
  /** `undefined` when the operation came over no HTTP request (a WebSocket). */
  readonly request: (HttpRequestLike & { res?: ServerResponse }) | undefined;
  readonly response: ServerResponse | undefined;

  constructor(context: ExecutionContext) {
    const [, args, graphqlContext, info] =
      context.getArgs<[unknown, Record<string, unknown>, GraphqlContextLike | undefined, ResolveInfoLike]>();
    this.args = args ?? {};
    this.info = info;
    const { req, request, res, reply } = graphqlContext ?? {};
    this.request = req ?? request ?? reply?.request;
    // Apollo's context holds only the request; on Express, the request knows its response.
    const response = res ?? reply ?? this.request?.res;
    this.response = response ? rawResponse(response) : undefined;
  }

  /**
   * Whether the operation came over a WebSocket (Mercurius's
   * `fullWsTransport`, whose context's `request` is the connection's upgrade
   * request): its headers name the connection, not this operation.
   */
  get overWebSocket(): boolean {
    const upgrade = this.request?.headers.upgrade;
    return typeof upgrade === 'string' && upgrade.toLowerCase() === 'websocket';
  }

  /** Whether the field is a root field of a mutation: the only GraphQL calls whose answer is stored. */
  get isMutation(): boolean {
    const { info } = this;
    return info.operation.operation === 'mutation' && info.parentType.name === info.schema.getMutationType()?.name;
  }

  /**
   * The response keys (alias or name) of the operation's root fields, as
   * written: fragments spread, `@skip`/`@include` not evaluated, fields of
   * one response key merged as GraphQL executes them (once), introspection
   * (`__typename`) left out.
   */
  rootFields(): string[] {
    const keys = new Set<string>();
    const spread = new Set<string>();
    const pending: SelectionSetLike[] = [this.info.operation.selectionSet];
    for (let set = pending.pop(); set; set = pending.pop()) {
      for (const selection of set.selections) {
        if (selection.kind === 'Field') {
          if (!selection.name.value.startsWith('__')) keys.add(selection.alias?.value ?? selection.name.value);
        } else if (selection.kind === 'InlineFragment') pending.push(selection.selectionSet);
        else if (!spread.has(selection.name.value)) {
          spread.add(selection.name.value);
          const fragment = this.info.fragments[selection.name.value];
          if (fragment) pending.push(fragment.selectionSet);
        }
      }
    }
    return [...keys];
  }
}

/** Where the drivers keep the HTTP request and response on the GraphQL context. */
interface GraphqlContextLike {
  req?: HttpRequestLike & { res?: ServerResponse };
  request?: HttpRequestLike & { res?: ServerResponse };
  res?: ServerResponse | { raw: ServerResponse };
  reply?: { raw: ServerResponse; request?: HttpRequestLike };
}
