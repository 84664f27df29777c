/**
 * @Idempotent among the other parts of a NestJS app's pipeline: timeouts,
 * decorators of the app's own, class hierarchies, handlers that write their
 * own response, global pipes, uploads, and apps with two idempotency modules.
 * Each case boots a small app of its own, over real HTTP.
 */
import {
  Body,
  CallHandler,
  Controller,
  ExecutionContext,
  Injectable,
  Module,
  NestInterceptor,
  Post,
  Res,
  Sse,
  UploadedFile,
  UseInterceptors,
  ValidationPipe,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { FileInterceptor } from '@nestjs/platform-express';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { defer, from, interval, map, mergeMap, of, type Observable } from 'rxjs';
import { currentExecution, MemoryStore, type Execution } from '@idempotency-chain/idempotency';
import { CurrentExecution, Idempotent, IdempotencyModule, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { TimeoutInterceptor } from './fixture-app/shop.app';

const runs: Record<string, number> = {};
const hit = (name: string) => (runs[name] = (runs[name] ?? 0) + 1);

/** Another team's decorator: wraps the method and copies nothing. */
function Traced(): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const original = descriptor.value as (...args: unknown[]) => unknown;
    descriptor.value = function (this: unknown, ...args: unknown[]) {
      return original.apply(this, args);
    };
  };
}

/** Slow work after the handler, outside it: the answer comes late. */
@Injectable()
class SlowAfterInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(mergeMap(async (value) => (await sleep(1_500), value)));
  }
}

class Execution2Dto {
  amountCents!: number;
}

@Controller()
class PipelineController {
  @Post('observable-timeout')
  @UseInterceptors(TimeoutInterceptor)
  @Idempotent('p.observable-timeout')
  observableTimeout() {
    return from(sleep(500).then(() => ({ charge: hit('observable-timeout') })));
  }

  @Post('traced')
  @Traced()
  @Idempotent('p.traced')
  traced(@Body() body: { amountCents: number }) {
    return { charge: hit('traced'), ...body };
  }

  @Post('writes-503')
  @Idempotent('p.writes-503')
  async writes503(@Res() res: { status(code: number): { send(body: string): void } }) {
    hit('writes-503');
    await sleep(10);
    res.status(503).send('bank down');
  }

  @Post('slow-after')
  @UseInterceptors(SlowAfterInterceptor)
  @Idempotent('p.slow-after', { leaseMs: 5_000 })
  async slowAfter() {
    await sleep(300);
    return { charge: hit('slow-after') };
  }

  @Post('observable-current')
  @Idempotent('p.observable-current')
  observableCurrent() {
    return defer(() => of({ epoch: currentExecution()?.epoch ?? null }));
  }

  @Post('execution-param')
  @Idempotent('p.execution-param')
  executionParam(@Body() body: Execution2Dto, @CurrentExecution() execution: Execution) {
    return { epoch: execution.epoch, amountCents: body.amountCents };
  }

  @Post('upload')
  @UseInterceptors(FileInterceptor('file'))
  @Idempotent('p.upload')
  upload(@UploadedFile() file: { size: number }) {
    return { charge: hit('upload'), size: file.size };
  }
}

@Idempotent('p.base')
class PaymentsBase {
  @Post('inherited')
  inherited() {
    return { charge: hit('inherited') };
  }
}

@Controller('child')
class ChildController extends PaymentsBase {
  @Post('own')
  own() {
    return { charge: hit('own') };
  }
}

@Controller('events')
class EventsController {
  @Sse('stream')
  @Idempotent('p.events')
  stream() {
    return interval(1_000).pipe(map(() => ({ data: 'tick' })));
  }
}

@Injectable()
class ChargingService {
  @Idempotent('p.service')
  charge() {
    return hit('service');
  }
}

async function boot(
  controllers: Type[],
  {
    adapter = 'express',
    options = {},
    pipes = [],
    providers = [],
  }: { adapter?: 'express' | 'fastify'; options?: Partial<IdempotencyModuleOptions>; pipes?: ValidationPipe[]; providers?: Type[] } = {},
): Promise<{ app: INestApplication; url: string }> {
  @Module({
    imports: [
      IdempotencyModule.forRoot({
        service: 'pipeline',
        store: new MemoryStore(),
        scope: 'shared',
        metrics: false,
        currentExecution: true,
        ...options,
      }),
    ],
    controllers,
    providers,
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, adapter === 'express' ? new ExpressAdapter() : new FastifyAdapter(), {
    logger: false,
    abortOnError: false,
  });
  app.useGlobalPipes(...pipes);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

async function post(url: string, key: string | undefined, body: unknown = {}, signal?: AbortSignal) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
    signal,
  });
  const text = await response.text();
  return { status: response.status, replayed: response.headers.get('idempotent-replayed') === 'true', text };
}

describe('@Idempotent in the pipeline of an app', () => {
  let app: INestApplication;
  let url: string;
  beforeAll(
    async () =>
      ({ app, url } = await boot([PipelineController], {
        pipes: [new ValidationPipe({ transform: true, validateCustomDecorators: true })],
      })),
  );
  afterAll(() => app.close());

  it('an Observable handler cut off by a timeout never frees its key while its work goes on', async () => {
    const key = randomUUID();
    const answers = [await post(`${url}/observable-timeout`, key), await post(`${url}/observable-timeout`, key)];
    await sleep(600); // the promise behind the Observable charges anyway
    const later = await post(`${url}/observable-timeout`, key);

    expect(answers.map((answer) => answer.status)).toEqual([408, 500]);
    expect(later).toMatchObject({ status: 500, replayed: true });
    expect(runs['observable-timeout']).toBe(1);
  });

  it('a decorator of the app above @Idempotent that copies nothing does not turn protection off', async () => {
    const key = randomUUID();
    const [first, second] = [await post(`${url}/traced`, key, { amountCents: 1 }), await post(`${url}/traced`, key, { amountCents: 1 })];
    const keyless = await post(`${url}/traced`, undefined, { amountCents: 1 });

    expect([first.status, second.status, second.replayed]).toEqual([201, 201, true]);
    expect(keyless.status).toBe(400);
    expect(runs.traced).toBe(1);
  });

  it('a 503 a handler writes itself (@Res()) releases the key', async () => {
    const key = randomUUID();
    const answers = [await post(`${url}/writes-503`, key), await post(`${url}/writes-503`, key)];
    expect(answers.map((answer) => [answer.status, answer.replayed])).toEqual([
      [503, false],
      [503, false],
    ]);
    expect(runs['writes-503']).toBe(2);
  });

  it('a client gone before a slow pipeline rendered the answer still gets that answer stored, not a 500', async () => {
    const key = randomUUID();
    await post(`${url}/slow-after`, key, {}, AbortSignal.timeout(100)).catch(() => undefined);
    let retry = await post(`${url}/slow-after`, key);
    while (retry.status === 409) retry = (await sleep(200), await post(`${url}/slow-after`, key));

    expect(retry).toMatchObject({ status: 201, replayed: true });
    expect(runs['slow-after']).toBe(1);
  });

  it('currentExecution() works inside an Observable handler', async () => {
    const answer = await post(`${url}/observable-current`, randomUUID());
    expect(JSON.parse(answer.text).epoch).toBeGreaterThan(0);
  });

  it('@CurrentExecution() is out of reach of a global ValidationPipe that validates custom decorators', async () => {
    const answer = await post(`${url}/execution-param`, randomUUID(), { amountCents: 3 });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.text)).toEqual({ epoch: expect.any(Number), amountCents: 3 });
  });

  it('an uploaded file is part of the request: the same key with another file is 422', async () => {
    const key = randomUUID();
    const upload = async (content: string) => {
      const form = new FormData();
      form.append('file', new Blob([content], { type: 'text/plain' }), 'order.txt');
      const response = await fetch(`${url}/upload`, { method: 'POST', headers: { 'idempotency-key': key }, body: form });
      return response.status;
    };
    expect([await upload('pay 100 to ALICE'), await upload('pay 100 to ALICE'), await upload('pay 999999 to MALLORY')]).toEqual([
      201, 201, 422,
    ]);
    expect(runs.upload).toBe(1);
  });
});

describe('what @Idempotent cannot protect stops the app at boot', () => {
  it.each<[string, Type[], Type[], RegExp]>([
    [
      'a subclass route that only inherits a class-level @Idempotent',
      [ChildController],
      [],
      /ChildController\.own inherits @Idempotent from a parent class but is not protected/,
    ],
    ['server-sent events', [EventsController], [], /@Idempotent on EventsController\.stream: server-sent events cannot be replayed/],
    ['a method of a provider', [], [ChargingService], /@Idempotent on ChargingService\.charge: only HTTP routes and message handlers/],
  ])('%s', async (_name, controllers, providers, message) => {
    await expect(boot(controllers, { providers })).rejects.toThrow(message);
  });
});

describe('two IdempotencyModules in one app', () => {
  it('each checks and serves its own controllers, with its own policy', async () => {
    @Controller('a')
    class AController {
      @Post()
      @Idempotent('a.op', { heartbeatMs: 5_000 })
      op() {
        return { a: hit('a') };
      }
    }
    @Controller('b')
    class BController {
      @Post()
      @Idempotent('b.op')
      op() {
        return { b: hit('b') };
      }
    }
    @Module({
      imports: [IdempotencyModule.forRoot({ service: 'a', store: new MemoryStore(), scope: 'shared', metrics: false })],
      controllers: [AController],
    })
    class AModule {}
    @Module({
      imports: [
        IdempotencyModule.forRoot({
          service: 'b',
          store: new MemoryStore(),
          scope: 'shared',
          metrics: false,
          defaults: { leaseMs: 3_000 },
        }),
      ],
      controllers: [BController],
    })
    class BModule {}
    @Module({ imports: [AModule, BModule] })
    class AppModule {}
    const app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: false, abortOnError: false });
    try {
      await app.listen(0, '127.0.0.1');
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const key = randomUUID();
      expect((await post(`${url}/a`, key)).status).toBe(201);
      expect((await post(`${url}/a`, key)).replayed).toBe(true);
      expect((await post(`${url}/b`, key)).status).toBe(201);
    } finally {
      await app.close();
    }
  });
});
