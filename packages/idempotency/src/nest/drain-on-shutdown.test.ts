import 'reflect-metadata';
import { Controller, Injectable, Module, Post, type OnApplicationShutdown } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ExpressAdapter } from '@nestjs/platform-express';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdempotencyCoordinator } from '../coordinator';
import { MemoryStore } from '../memory-store';
import { drainOnShutdown } from './drain-on-shutdown';
import { Idempotent } from './idempotent.decorator';
import { IdempotencyModule } from './idempotency.module';

/** An app of `module` on Fastify, shutting down as `drainOnShutdown` makes it. */
async function createApp(module: object, afterDrain?: () => Promise<void>): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(module as never, new FastifyAdapter(), { logger: false });
  drainOnShutdown(app, { afterDrain });
  return app;
}

// A shutdown that waits out a keep-alive timeout takes 72 s; one that ends takes milliseconds.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });
const ENDS_WITHIN_MS = 20_000;

/** The handler runs until the test lets it answer. */
class Gate {
  entered!: () => void;
  readonly enteredYet = new Promise<void>((resolve) => (this.entered = resolve));
  open!: () => void;
  readonly opened = new Promise<void>((resolve) => (this.open = resolve));
}
const gate = new Gate();

@Controller()
class SlowController {
  @Post('slow')
  async slow() {
    gate.entered();
    await gate.opened;
    return { done: true };
  }
}

@Module({
  imports: [IdempotencyModule.forRoot({ service: 'test', store: new MemoryStore(), scope: 'shared', metrics: false })],
  controllers: [SlowController],
})
class SlowModule {}

describe('graceful shutdown', () => {
  let app: NestFastifyApplication | undefined;

  afterAll(async () => {
    gate.open();
    await app?.close().catch(() => undefined);
  });

  it('lets the request in flight answer, closes its keep-alive connection after it, and ends', async () => {
    app = await createApp(SlowModule);
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    // fetch keeps its connections alive, as every HTTP client of a service does.
    const answer = fetch(`${url}/slow`, { method: 'POST' });
    await gate.enteredYet;

    const closed = app.close().then(() => 'closed');
    // The server no longer accepts connections: the shutdown has begun, with the request still in flight.
    while (app.getHttpServer().listening) await sleep(10);
    gate.open();
    const response = await answer;

    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ done: true });
    expect(response.headers.get('connection')).toBe('close');
    expect(await Promise.race([closed, sleep(ENDS_WITHIN_MS, 'still waiting', { ref: false })])).toBe('closed');
  });
});

/** A handler whose client goes away: it runs until the test lets it end. */
const charge = new Gate();

@Controller()
class ChargeController {
  @Post('charges')
  @Idempotent('test.charge')
  async charge() {
    charge.entered();
    await charge.opened;
    return { charged: true };
  }
}

/** What an app module closes on shutdown (a ledger's pool): it notes what was still running when it did. */
@Injectable()
class Ledger implements OnApplicationShutdown {
  runningAtClose: number | undefined;
  constructor(private readonly coordinator: IdempotencyCoordinator) {}
  onApplicationShutdown() {
    this.runningAtClose = this.coordinator.runningExecutions;
  }
}

@Module({
  imports: [IdempotencyModule.forRoot({ service: 'test', store: new MemoryStore(), scope: 'shared', metrics: false, isGlobal: true })],
  controllers: [ChargeController],
  providers: [Ledger],
})
class ChargeModule {}

describe('graceful shutdown of idempotent work', () => {
  it('lets an execution whose client went away end before any module closes what it uses', async () => {
    const order: string[] = [];
    const app = await createApp(ChargeModule, async () => {
      order.push(`afterDrain, running ${app.get(IdempotencyCoordinator).runningExecutions}`);
    });
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const client = new AbortController();
    const gone = fetch(`${url}/charges`, { method: 'POST', headers: { 'idempotency-key': 'k-1' }, signal: client.signal }).catch(
      (error: unknown) => error,
    );
    await charge.enteredYet;
    client.abort();
    await gone;

    // Nobody is connected, so the server closes at once; the handler still runs.
    const closed = app.close();
    while (app.getHttpServer().listening) await sleep(10);
    expect(app.get(IdempotencyCoordinator).runningExecutions).toBe(1);
    charge.open();
    await closed;

    expect(app.get(Ledger).runningAtClose).toBe(0);
    expect(order).toEqual(['afterDrain, running 0']);
  });
});

describe('drainOnShutdown on another adapter', () => {
  it('refuses an app that is not on Fastify, naming what it needs', async () => {
    const app = await NestFactory.create(SlowModule, new ExpressAdapter(), { logger: false });
    try {
      expect(() => drainOnShutdown(app)).toThrow('drainOnShutdown needs an app on Fastify (@nestjs/platform-fastify)');
    } finally {
      await app.close();
    }
  });
});
