import { Controller, Inject, Injectable, Module, Post } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Registry } from 'prom-client';
import { IdempotencyCoordinator } from '../coordinator';
import { MemoryStore } from '../memory-store';
import type { IdempotencyEvent, IdempotencyObserver } from '../observer';
import { IdempotencyMetrics } from './idempotency.metrics';
import { IdempotencyModule } from './idempotency.module';
import { Idempotent } from './idempotent.decorator';
import { IDEMPOTENCY_MODULE_OPTIONS } from './idempotency.module-definition';
import type { IdempotencyModuleOptions } from './idempotency.options';
import { IdempotencyRunner } from './idempotency.runner';
import { IdempotentRoutes } from './idempotent-routes';

@Controller()
class PingController {
  @Post('ping')
  @Idempotent('test.ping')
  ping() {
    return 'pong';
  }
}

@Module({ providers: [{ provide: 'SERVICE_NAME', useValue: 'async-service' }], exports: ['SERVICE_NAME'] })
class ConfigModule {}

describe('IdempotencyModule', () => {
  it('forRootAsync builds the coordinator from injected config, fans events out, and closes the store only when asked', async () => {
    const store = new MemoryStore();
    const close = vi.spyOn(store, 'close');
    const events: IdempotencyEvent[] = [];
    const observer: IdempotencyObserver = { record: (event) => events.push(event) };
    const registry = new Registry();
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdempotencyModule.forRootAsync({
          imports: [ConfigModule],
          inject: ['SERVICE_NAME'],
          useFactory: (service: string) => ({ service, store, observers: [observer], metrics: { registry }, closeStore: true }),
        }),
      ],
      controllers: [PingController],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();

    const coordinator = app.get(IdempotencyCoordinator);
    await coordinator.run({ operation: 'op', key: 'k', fingerprint: 'f' }, async () => 1);

    expect(events).toEqual([expect.objectContaining({ service: 'async-service', operation: 'op', outcome: 'executed' })]);
    expect(app.get(IdempotencyMetrics).registry).toBe(registry);
    expect(await registry.metrics()).toContain('outcome="executed"} 1');
    await app.close();
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('leaves a shared store open on shutdown by default', async () => {
    const store = new MemoryStore();
    const close = vi.spyOn(store, 'close');
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ service: 's', store, metrics: false })],
      controllers: [PingController],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    await app.close();

    expect(close).not.toHaveBeenCalled();
    await store.close();
  });

  it('hands maxWaiters to the coordinator, which refuses a cap that is not a whole number from 1 at boot', async () => {
    const store = new MemoryStore();
    const boot = Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ service: 's', store, metrics: false, maxWaiters: 0 })],
    }).compile();
    await expect(boot).rejects.toThrow('s: maxWaiters must be a whole number from 1 (got 0)');
    await store.close();
  });

  it('with isGlobal, serves @Idempotent routes of modules that do not import it', async () => {
    @Module({ controllers: [PingController] })
    class FeatureModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ service: 's', store: new MemoryStore(), metrics: false, isGlobal: true }), FeatureModule],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();

    expect(app.get(IdempotencyCoordinator)).toBeInstanceOf(IdempotencyCoordinator);
    await app.close();
  });

  it('serves its routes with an app’s runner whose constructor passes on the four arguments: a retry replays, the handler runs once', async () => {
    let runs = 0;
    @Controller()
    class CountingController {
      @Post('count')
      @Idempotent('test.count')
      count() {
        runs += 1;
        return { runs };
      }
    }
    @Injectable()
    class AppRunner extends IdempotencyRunner {
      constructor(
        coordinator: IdempotencyCoordinator,
        routes: IdempotentRoutes,
        adapterHost: HttpAdapterHost,
        @Inject(IDEMPOTENCY_MODULE_OPTIONS) options: IdempotencyModuleOptions,
      ) {
        super(coordinator, routes, adapterHost, options);
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [IdempotencyModule.forRoot({ service: 'subclassed', store: new MemoryStore(), scope: 'shared', metrics: false })],
      controllers: [CountingController],
      providers: [{ provide: IdempotencyRunner, useClass: AppRunner }],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const send = () => fetch(`${url}/count`, { method: 'POST', headers: { 'idempotency-key': 'subclass-1' } });
      const first = await send();
      const second = await send();

      expect(await first.json()).toEqual({ runs: 1 });
      expect(await second.json()).toEqual({ runs: 1 });
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(runs).toBe(1);
    } finally {
      await app.close();
    }
  });
});
