import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import {
  HttpException,
  Injectable,
  Module,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Args, Field, GraphQLModule, Int, Mutation, ObjectType, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { IdempotencyModule, Idempotent, principalScope, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { createRedisClient, RedisStore } from '@idempotency-chain/idempotency/redis';
import WebSocket from 'ws';
import { Ledger } from './charges';

// The copy of graphql the drivers load as Node resolves it (its CommonJS build): a scalar of Vite's ESM copy would be foreign to their schema.
const { GraphQLScalarType, valueFromASTUntyped } = createRequire(__filename)('graphql') as typeof import('graphql');

/** Any JSON value as an argument: what a client can nest as deep as it likes. */
const JsonScalar = new GraphQLScalarType({
  name: 'JSON',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});

@ObjectType('Charge')
class ChargeAnswer {
  @Field(() => Int)
  charge!: number;

  @Field(() => Int)
  amountCents!: number;
}

/** How often the `receipt` field resolver ran: it runs again on every replay. */
@Injectable()
export class Receipts {
  reads = 0;
}

/** The payments API as GraphQL mutations, each charge, decline and outage counted by the shared `Ledger`. */
@Resolver(() => ChargeAnswer)
export class ChargesResolver {
  constructor(
    private readonly ledger: Ledger,
    private readonly receipts: Receipts,
  ) {}

  @Query(() => Int)
  charges(): number {
    return this.ledger.charges;
  }

  @Mutation(() => ChargeAnswer, { nullable: true })
  @Idempotent('graphql.charge')
  charge(@Args('amountCents', { type: () => Int }) amountCents: number) {
    return this.ledger.charge({ amountCents });
  }

  /** A charge whose duplicates do not wait for it: they are refused while it runs. */
  @Mutation(() => ChargeAnswer, { nullable: true })
  @Idempotent('graphql.settle', { inFlight: 'reject' })
  settle(@Args('amountCents', { type: () => Int }) amountCents: number) {
    return this.ledger.charge({ amountCents });
  }

  /** A final refusal (402): stored, and thrown again on replay. */
  @Mutation(() => ChargeAnswer, { nullable: true })
  @Idempotent('graphql.decline')
  decline(@Args('amountCents', { type: () => Int }) amountCents: number): never {
    this.ledger.declines += 1;
    throw new HttpException(`declined ${amountCents} (attempt ${this.ledger.declines})`, 402);
  }

  /** A transient failure (503): the key is released. */
  @Mutation(() => ChargeAnswer, { nullable: true })
  @Idempotent('graphql.unavailable')
  unavailable(): never {
    this.ledger.unavailable += 1;
    throw new HttpException(`bank down (attempt ${this.ledger.unavailable})`, 503);
  }

  /** Takes any JSON (fingerprinted whole), answers how many keys it has. */
  @Mutation(() => Int, { nullable: true })
  @Idempotent('graphql.annotate')
  annotate(@Args('note', { type: () => JsonScalar }) note: object): number {
    this.ledger.charges += 1;
    return Object.keys(note).length;
  }

  /** A read of the charge: runs for every answer that selects it, replays included. */
  @ResolveField(() => String)
  receipt(@Parent() charge: ChargeAnswer): string {
    this.receipts.reads += 1;
    return `receipt-${charge.charge}-${charge.amountCents}`;
  }
}

/**
 * The caller, from the `x-user` header, as `request.user` (as an auth guard
 * would leave it on the GraphQL context's request), and every operation
 * counted as it arrives, before the idempotency claim.
 */
@Injectable()
class CallerGuard implements CanActivate {
  constructor(private readonly ledger: Ledger) {}

  canActivate(context: ExecutionContext): boolean {
    const graphql =
      context.getArgs<[unknown, unknown, { req?: CallerRequest; request?: CallerRequest; reply?: { request: CallerRequest } }]>()[2];
    // Mercurius over a WebSocket: the connection's upgrade request.
    const request = graphql.req ?? graphql.reply?.request ?? graphql.request;
    const user = request?.headers['x-user'];
    if (request && typeof user === 'string') request.user = { id: user };
    this.ledger.arrivals += 1;
    return true;
  }
}

interface CallerRequest {
  headers: Record<string, string | string[] | undefined>;
  user?: unknown;
}

/** What both drivers are given: the schema built from the resolvers, in memory, with the JSON scalar; no IDE page. */
const SCHEMA = { autoSchemaFile: true, graphiql: false, resolvers: { JSON: JsonScalar } } as const;

/** The two maintained drivers, each on its HTTP platform. */
export const Drivers = {
  'Mercurius on Fastify': (config: Partial<MercuriusDriverConfig> = {}) => ({
    adapter: new FastifyAdapter(),
    graphql: GraphQLModule.forRoot<MercuriusDriverConfig>({ driver: MercuriusDriver, ...SCHEMA, ...config }),
  }),
  'Apollo on Express': (config: Partial<ApolloDriverConfig> = {}) => ({
    adapter: new ExpressAdapter(),
    graphql: GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, ...SCHEMA, ...config }),
  }),
} as const;

/** What a test changes of the app `startGraphqlApp` builds: its driver's config, the idempotency module's options. */
export interface GraphqlAppOptions {
  driver?: Partial<MercuriusDriverConfig> & Partial<ApolloDriverConfig>;
  module?: Partial<IdempotencyModuleOptions>;
}

export type DriverName = keyof typeof Drivers;

/**
 * The payments API on `driver`, listening on a free loopback port: records
 * on the real Redis (`REDIS_URL`) under a prefix of their own (or in
 * `options.module.store`, for a test that inspects them), scoped by the
 * caller (`principalScope`, reading the user the guard set). With
 * `resolvers` beside `ChargesResolver`, each given `Ledger` and `Receipts`.
 */
export async function startGraphqlApp(
  driver: DriverName,
  resolvers: Type[] = [],
  options: GraphqlAppOptions = {},
): Promise<{ app: INestApplication; url: string }> {
  const { adapter, graphql } = Drivers[driver](options.driver);
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const store =
    options.module?.store ?? new RedisStore({ client: createRedisClient(url), prefix: `test:graphql:${randomUUID()}:`, ownsClient: true });
  @Module({
    imports: [
      graphql,
      IdempotencyModule.forRoot({
        service: 'payments',
        store,
        scope: principalScope,
        metrics: false,
        closeStore: true,
        ...options.module,
      }),
    ],
    providers: [ChargesResolver, ...resolvers, Ledger, Receipts, { provide: APP_GUARD, useClass: CallerGuard }],
  })
  class PaymentsGraphqlModule {}
  const moduleRef = await Test.createTestingModule({ imports: [PaymentsGraphqlModule] }).compile();
  const app = moduleRef.createNestApplication(adapter, { logger: false });
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app.close();
    throw error;
  }
  return { app, url: `${await app.getUrl()}/graphql` };
}

/** A GraphQL response as the client got it. */
export interface GraphqlResponse {
  status: number;
  headers: Headers;
  body: { data?: Record<string, unknown> | null; errors?: GraphqlError[] };
}

export interface GraphqlError {
  message: string;
  extensions?: Record<string, unknown>;
}

/** POST one GraphQL document (or a request body as it is), with the key (when given) and the caller. */
export async function post(
  url: string,
  document: { query: string; variables?: object } | string,
  headers: { key?: string; user?: string } = {},
): Promise<GraphqlResponse> {
  const sent: Record<string, string> = { 'content-type': 'application/json' };
  if (headers.key !== undefined) sent['idempotency-key'] = headers.key;
  if (headers.user !== undefined) sent['x-user'] = headers.user;
  const response = await fetch(url, {
    method: 'POST',
    headers: sent,
    body: typeof document === 'string' ? document : JSON.stringify(document),
  });
  const text = await response.text();
  let body: GraphqlResponse['body'];
  try {
    body = JSON.parse(text) as GraphqlResponse['body'];
  } catch {
    body = { errors: [{ message: text }] };
  }
  return { status: response.status, headers: response.headers, body };
}

/** A field's error as compared between a first answer and its replay: message and extensions, less a stack trace. */
export function comparable(error: GraphqlError | undefined): GraphqlError | undefined {
  if (!error) return undefined;
  const { stacktrace: _stacktrace, ...extensions } = error.extensions ?? {};
  return { message: error.message, extensions };
}

/**
 * Send each document over one WebSocket (the `graphql-transport-ws`
 * protocol, Mercurius's `fullWsTransport`), opened with the key and the
 * caller as its upgrade request's headers, one after the other; the
 * payload of each answer.
 */
export async function overWebSocket(
  url: string,
  queries: string[],
  headers: { key: string; user: string },
): Promise<GraphqlResponse['body'][]> {
  const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws', {
    headers: { 'idempotency-key': headers.key, 'x-user': headers.user },
  });
  const messages: Array<{ type: string; id?: string; payload?: GraphqlResponse['body'] }> = [];
  let arrived = () => {};
  socket.on('message', (data: Buffer) => {
    messages.push(JSON.parse(data.toString('utf8')) as (typeof messages)[number]);
    arrived();
  });
  const next = async (type: string, id?: string) => {
    for (;;) {
      const found = messages.find((message) => message.type === type && message.id === id);
      if (found) return found;
      await new Promise<void>((resolve) => (arrived = resolve));
    }
  };
  try {
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await next('connection_ack');
    const answers: GraphqlResponse['body'][] = [];
    for (const [index, query] of queries.entries()) {
      socket.send(JSON.stringify({ id: String(index), type: 'subscribe', payload: { query } }));
      answers.push((await next('next', String(index))).payload ?? {});
    }
    return answers;
  } finally {
    socket.close();
  }
}
