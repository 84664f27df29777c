/**
 * A small fixture app for the NestJS integration tests: one route per
 * behaviour, each counting its executions, the slow ones held by a latch
 * (never a sleep), booted on Fastify or Express and called over real HTTP.
 */
import {
  Body,
  Controller,
  HttpCode,
  Injectable,
  Module,
  Post,
  ServiceUnavailableException,
  UnprocessableEntityException,
  ValidationPipe,
  type INestApplication,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { IsInt, IsPositive, IsString } from 'class-validator';
import { Registry } from 'prom-client';
import { MemoryStore } from '../memory-store';
import type { ClaimRequest, ClaimResult, IdempotencyStore } from '../store';
import { currentExecution } from '../current-execution';
import type { Execution } from '../execution';
import { CurrentExecution } from './current-execution.decorator';
import { IdempotencyModule } from './idempotency.module';
import type { IdempotencyModuleOptions, KeyMode } from './idempotency.options';
import { Idempotent } from './idempotent.decorator';
import { ProblemDetailsFilter } from './problem-details.filter';

/** A promise opened from outside. */
export class Latch {
  readonly promise: Promise<void>;
  open!: () => void;
  constructor() {
    this.promise = new Promise((resolve) => (this.open = resolve));
  }
}

/** Resolves once `predicate` holds, re-checked on every `notify()`. */
class Condition {
  private waiters: Array<() => void> = [];
  notify(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

/** What the routes count and wait on. */
@Injectable()
class FixtureState {
  readonly calls: Record<string, number> = {};
  /** Opened when the slow handler is entered; the handler then waits for `release`. */
  entered = new Latch();
  release = new Latch();
  count(route: string): number {
    this.calls[route] = (this.calls[route] ?? 0) + 1;
    return this.calls[route];
  }
}

class ChargeDto {
  @IsString() orderId!: string;
  @IsInt() @IsPositive() amountCents!: number;
}

@Controller()
class FixtureController {
  constructor(private readonly state: FixtureState) {}

  @Post('charges')
  @Idempotent('test.charge')
  charge(@Body() body: { amountCents?: number }) {
    const run = this.state.count('charge');
    return { chargeId: `ch_${run}`, amountCents: body.amountCents, note: 'ünïcode ✓' };
  }

  @Post('slow')
  @Idempotent('test.slow')
  async slow(@Body() body: unknown) {
    return this.held('slow', body);
  }

  @Post('slow-reject')
  @Idempotent('test.slow-reject', { inFlight: 'reject' })
  async slowReject(@Body() body: unknown) {
    return this.held('slow-reject', body);
  }

  @Post('unprocessable')
  @Idempotent('test.unprocessable')
  unprocessable() {
    throw new UnprocessableEntityException(`card declined (run ${this.state.count('unprocessable')})`);
  }

  @Post('unavailable')
  @Idempotent('test.unavailable')
  unavailable() {
    throw new ServiceUnavailableException(`bank down (run ${this.state.count('unavailable')})`);
  }

  @Post('crash')
  @Idempotent('test.crash')
  crash() {
    throw new Error(`secret internals (run ${this.state.count('crash')})`);
  }

  @Post('validated')
  @Idempotent('test.validated')
  validated(@Body(new ValidationPipe({ whitelist: true })) body: ChargeDto) {
    return { run: this.state.count('validated'), ...body };
  }

  @Post('fingerprint')
  @Idempotent('test.fingerprint', { keyMode: 'fingerprint' })
  fingerprint() {
    return { run: this.state.count('fingerprint') };
  }

  @Post('none')
  @Idempotent('test.none', { keyMode: 'none' })
  none() {
    return { run: this.state.count('none') };
  }

  @Post('epoch')
  @HttpCode(200)
  @Idempotent('test.epoch')
  epoch(@CurrentExecution() execution?: Execution) {
    this.state.count('epoch');
    return { epoch: execution?.epoch, sameAsCurrent: execution === currentExecution() && execution !== undefined };
  }

  @Post('open')
  @Idempotent('test.open', { onStoreFailure: 'fail-open' })
  open() {
    return { run: this.state.count('open') };
  }

  private async held(route: string, body: unknown) {
    const run = this.state.count(route);
    this.state.entered.open();
    await this.state.release.promise;
    return { run, body };
  }
}

/**
 * A memory store that reports every wait, and every claim that found its key
 * held, so tests can act once requests are waiting. The requests waiting on
 * one key share one wait.
 */
export class ObservedStore extends MemoryStore {
  waiting = 0;
  abortedWaits = 0;
  foundHeld = 0;
  readonly changed = new Condition();
  override async claim(request: ClaimRequest): Promise<ClaimResult> {
    const answer = await super.claim(request);
    if (answer.status === 'in_progress') {
      this.foundHeld += 1;
      this.changed.notify();
    }
    return answer;
  }
  override async waitForChange(recordKey: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.waiting += 1;
    this.changed.notify();
    try {
      await super.waitForChange(recordKey, timeoutMs, signal);
    } finally {
      this.waiting -= 1;
      if (signal?.aborted) this.abortedWaits += 1;
      this.changed.notify();
    }
  }
}

/** A store whose every call fails, as when Redis is unreachable. */
export class DownStore implements IdempotencyStore {
  private fail(): Promise<never> {
    return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
  }
  claim(_request: ClaimRequest): Promise<ClaimResult> {
    return this.fail();
  }
  complete(): Promise<boolean> {
    return this.fail();
  }
  release(): Promise<boolean> {
    return this.fail();
  }
  renew(): Promise<boolean> {
    return this.fail();
  }
  waitForChange(): Promise<void> {
    return this.fail();
  }
  async close(): Promise<void> {}
}

export type AdapterName = 'fastify' | 'express';

/** Smaller than both adapters' defaults, so "too large" costs little. */
export const BODY_LIMIT = 4096;

export interface Fixture {
  app: INestApplication;
  url: string;
  state: FixtureState;
  registry: Registry;
  close(): Promise<void>;
}

/** Boot the fixture app on `adapter`, listening on an ephemeral loopback port. */
export async function bootFixture(
  adapter: AdapterName,
  options: { store?: IdempotencyStore; keyMode?: KeyMode; scope?: IdempotencyModuleOptions['scope'] } = {},
): Promise<Fixture> {
  const registry = new Registry();
  const store = options.store ?? new ObservedStore();
  @Module({
    imports: [
      IdempotencyModule.forRoot({
        service: 'test',
        store,
        keyMode: options.keyMode,
        scope: options.scope ?? 'shared',
        currentExecution: true,
        metrics: { registry },
        closeStore: true,
      }),
    ],
    controllers: [FixtureController],
    providers: [FixtureState, { provide: APP_FILTER, useClass: ProblemDetailsFilter }],
  })
  class FixtureModule {}

  const moduleRef = await Test.createTestingModule({ imports: [FixtureModule] }).compile();
  let app: INestApplication;
  if (adapter === 'fastify') {
    app = moduleRef.createNestApplication(new FastifyAdapter({ bodyLimit: BODY_LIMIT }), { logger: false });
  } else {
    const express = moduleRef.createNestApplication<NestExpressApplication>(new ExpressAdapter(), { bodyParser: false, logger: false });
    express.useBodyParser('json', { limit: BODY_LIMIT });
    app = express;
  }
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), state: app.get(FixtureState), registry, close: () => app.close() };
}

/** POST JSON (or a raw string body) over real HTTP. */
export async function post(
  fixture: Pick<Fixture, 'url'>,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const response = await fetch(`${fixture.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}
