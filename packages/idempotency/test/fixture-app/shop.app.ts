/**
 * A small shop API written the way a team new to this package would write
 * it: its own guard, DTO classes, a global `ClassSerializerInterceptor`,
 * handlers that set their own status and headers, a file download, path
 * parameters and a query string - and no `ProblemDetailsFilter`. It uses the
 * package's public entry points only, by name.
 */
import {
  BadRequestException,
  Body,
  CallHandler,
  CanActivate,
  ClassSerializerInterceptor,
  Controller,
  ExecutionContext,
  GatewayTimeoutException,
  HttpCode,
  HttpException,
  Injectable,
  Module,
  NestInterceptor,
  Param,
  Post,
  Query,
  RequestTimeoutException,
  Res,
  ServiceUnavailableException,
  StreamableFile,
  UnauthorizedException,
  UseInterceptors,
  type INestApplication,
  type LoggerService,
  type MiddlewareConsumer,
  type PipeTransform,
  type NestModule,
  type Type,
} from '@nestjs/common';
import { catchError, delay, map, mergeMap, NEVER, retry, throwError, timeout, TimeoutError, type Observable } from 'rxjs';
import { APP_GUARD, APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Exclude } from 'class-transformer';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { MemoryStore, type IdempotencyStore } from '@idempotency-chain/idempotency';
import { Idempotent, IdempotencyModule, IdempotencyRunner, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';

/** How often each handler really ran: what a double execution would show. */
export class Runs {
  readonly count: Record<string, number> = {};
  hit(name: string): number {
    this.count[name] = (this.count[name] ?? 0) + 1;
    return this.count[name];
  }
}

/** `Authorization: Bearer <tenant>` makes `request.user`; anything else is 401. */
@Injectable()
class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; user?: unknown }>();
    const tenant = /^Bearer (\w[\w-]*)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!tenant) throw new UnauthorizedException();
    request.user = { id: tenant, plan: 'pro' };
    return true;
  }
}

export class Card {
  cardId!: string;
  last4!: string;
  /** The full card number: never leaves the server, so never stored or replayed either. */
  @Exclude() pan!: string;
}

/** The response object of both adapters, as far as these handlers use it. */
interface Reply {
  status(code: number): unknown;
  header(name: string, value: string): unknown;
}

/** The usual NestJS timeout pattern: answer 408 when the handler takes longer than 200 ms. */
@Injectable()
export class TimeoutInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      timeout(200),
      catchError((error: unknown) => throwError(() => (error instanceof TimeoutError ? new RequestTimeoutException() : error))),
    );
  }
}

/** An outer interceptor that fails after the handler returned. */
@Injectable()
class FailAfterInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map(() => {
        throw new BadRequestException('the envelope check failed after the handler');
      }),
    );
  }
}

/** An outer interceptor that takes its time after the handler returned (an audit call, say): 4 s. */
@Injectable()
class SlowRenderInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(delay(4_000));
  }
}

/** An outer interceptor that never lets the answer out once the handler returned (an audit call with no timeout), for requests that ask for it. */
@Injectable()
class HangingInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const hangs = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-audit'] === 'hang';
    return hangs ? next.handle().pipe(mergeMap(() => NEVER)) : next.handle();
  }
}

/** An `isFinal` that throws, as one with a bug does. */
function brokenRule(): boolean {
  throw new Error('isFinal bug');
}

/**
 * The usual NestJS retry pattern: run the handler again after an error
 * (rxjs `retry()`), once; after 3 s when the request asks for it (`x-retry-after-ms`).
 */
@Injectable()
class RetryInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const after = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>().headers['x-retry-after-ms'];
    return next.handle().pipe(retry({ count: 1, delay: Number(after ?? 0) }));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

@Controller()
export class ShopController {
  constructor(private readonly runs: Runs) {}

  @Post('orders/:orderId/refund')
  @Idempotent('shop.refund')
  refund(@Param('orderId') orderId: string, @Body() body: { amountCents: number }) {
    return { refund: this.runs.hit(`refund:${orderId}`), orderId, amountCents: body.amountCents };
  }

  @Post('payouts')
  @Idempotent('shop.payout')
  payout(@Query('orderId') orderId: string) {
    return { payout: this.runs.hit(`payout:${orderId}`), orderId };
  }

  @Post('cancel/:orderId')
  @Idempotent('shop.cancel', { keyMode: 'fingerprint' })
  cancel(@Param('orderId') orderId: string) {
    return { cancelled: orderId, run: this.runs.hit(`cancel:${orderId}`) };
  }

  @Post('cards')
  @Idempotent('shop.card')
  card(@Body() body: { pan: string }): Card {
    return Object.assign(new Card(), { cardId: `card_${this.runs.hit('card')}`, last4: body.pan.slice(-4), pan: body.pan });
  }

  @Post('exports')
  @Idempotent('shop.export')
  export(@Res({ passthrough: true }) reply: Reply) {
    const run = this.runs.hit('export');
    reply.status(202);
    reply.header('Location', `/exports/${run}`);
    reply.header('Set-Cookie', `session=${run}; HttpOnly`);
    reply.header('X-Export-Run', String(run));
    return { exportId: run, state: 'queued' };
  }

  @Post('statements')
  @Idempotent('shop.statement')
  statement() {
    const run = this.runs.hit('statement');
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 159, 146, 150, 255]), Buffer.from(`run ${run}\n%%EOF`)]);
    return new StreamableFile(Readable.from([pdf.subarray(0, 7), pdf.subarray(7)]), {
      type: 'application/pdf',
      disposition: 'attachment; filename="statement.pdf"',
    });
  }

  @Post('big')
  @Idempotent('shop.big')
  big() {
    // Random, so that no compression brings it under the limit.
    return { run: this.runs.hit('big'), padding: randomBytes(3072).toString('base64') };
  }

  @Post('report')
  @Idempotent('shop.report')
  report() {
    // 1.5 MB of JSON that compresses about a thousandfold: stored gzipped (the Fastify shop compresses), it fits the limit.
    return { run: this.runs.hit('report'), rows: 'x'.repeat(1_500_000) };
  }

  @Post('receipt')
  @Idempotent('shop.receipt')
  receipt() {
    // About 1.8 KB of JSON that compresses well: stored gzipped (the Fastify shop compresses), it decodes to nearly the limit.
    return { run: this.runs.hit('receipt'), lines: 'coffee 3.20; '.repeat(140) };
  }

  @Post('bigint')
  @Idempotent('shop.bigint')
  bigint() {
    return { run: this.runs.hit('bigint'), balance: 10n ** 20n };
  }

  @Post('slow')
  @Idempotent('shop.slow', { inFlight: 'reject' })
  async slow() {
    const run = this.runs.hit('slow');
    await sleep(1_000);
    return { run };
  }

  // Stacked decorators apply bottom up, and Nest runs interceptors in the
  // order they were added: the lower one here is the outer one.
  @Post('timeout-outer')
  @Idempotent('shop.timeout-outer')
  @UseInterceptors(TimeoutInterceptor)
  async timeoutOuter() {
    const run = this.runs.hit('timeout-outer');
    await sleep(600);
    this.runs.hit('timeout-outer:done');
    return { run };
  }

  @Post('timeout-inner')
  @UseInterceptors(TimeoutInterceptor)
  @Idempotent('shop.timeout-inner')
  async timeoutInner() {
    const run = this.runs.hit('timeout-inner');
    await sleep(600);
    this.runs.hit('timeout-inner:done');
    return { run };
  }

  @Post('fail-after')
  @UseInterceptors(FailAfterInterceptor)
  @Idempotent('shop.fail-after')
  failAfter() {
    return { run: this.runs.hit('fail-after') };
  }

  @Post('slow-render')
  @Idempotent('shop.slow-render', { leaseMs: 1_500 })
  @UseInterceptors(SlowRenderInterceptor)
  slowRender() {
    return { run: this.runs.hit('slow-render') };
  }

  @Post('never-rendered')
  @Idempotent('shop.never-rendered', { leaseMs: 1_000, maxWaitMs: 2_000 })
  @UseInterceptors(HangingInterceptor)
  neverRendered() {
    return { run: this.runs.hit('never-rendered') };
  }

  @Post('writes-itself')
  @Idempotent('shop.writes-itself')
  writesItself(@Res() reply: Reply & { send(body: string): unknown }) {
    const run = this.runs.hit('writes-itself');
    reply.status(201);
    reply.header('content-type', 'application/json');
    reply.send(JSON.stringify({ run }));
  }

  @Post('writes-itself-later')
  @Idempotent('shop.writes-itself-later')
  writesItselfLater(@Res() reply: Reply & { send(body: string): unknown }) {
    const run = this.runs.hit('writes-itself-later');
    // Returns at once and answers two seconds later, as a handler that answers in the callback of a call to a bank.
    setTimeout(() => {
      reply.status(201);
      reply.header('content-type', 'application/json');
      reply.send(JSON.stringify({ run }));
    }, 2_000);
  }

  @Post('big-error')
  @Idempotent('shop.big-error')
  bigError() {
    throw new ServiceUnavailableException(`bank down (run ${this.runs.hit('big-error')}) ${'.'.repeat(4096)}`);
  }

  @Post('broken-stream')
  @Idempotent('shop.broken-stream')
  brokenStream() {
    this.runs.hit('broken-stream');
    const stream = new Readable({ read() {} });
    stream.push('%PDF-partial-');
    setTimeout(() => stream.destroy(new Error('disk gone')), 20);
    return new StreamableFile(stream, { type: 'application/pdf' });
  }

  @Post('rule-throws')
  // A rule of the app's own with a bug in it; a key left held answers 409 at once.
  @Idempotent('shop.rule-throws', { maxWaitMs: 0, isFinal: brokenRule })
  ruleThrows() {
    return { run: this.runs.hit('rule-throws') };
  }

  @Post('rule-throws-on-timeout')
  // The same broken rule on a handler whose downstream timed out: nothing is final about a 504.
  @Idempotent('shop.rule-throws-on-timeout', { maxWaitMs: 0, isFinal: brokenRule })
  ruleThrowsOnTimeout() {
    const run = this.runs.hit('rule-throws-on-timeout');
    if (run === 1) throw new GatewayTimeoutException('the bank did not answer in time');
    return { run };
  }

  @Post('flaky')
  @UseInterceptors(RetryInterceptor)
  @Idempotent('shop.flaky', { leaseMs: 500, maxWaitMs: 1_000 })
  flaky() {
    // Every other call fails as a bank that is briefly busy does: the interceptor's retry succeeds.
    const run = this.runs.hit('flaky');
    if (run % 2 === 1) throw new ServiceUnavailableException('bank busy');
    return { run };
  }

  @Post('charged-then-failed')
  @UseInterceptors(RetryInterceptor, FailAfterInterceptor)
  @Idempotent('shop.charged-then-failed', { maxWaitMs: 1_000 })
  chargedThenFailed() {
    return { run: this.runs.hit('charged-then-failed') };
  }

  @Post('client-closed')
  @Idempotent('shop.client-closed')
  clientClosed() {
    this.runs.hit('client-closed');
    // The status this package answers a client that went away with.
    throw new HttpException('Client Closed Request', 499);
  }

  @Post('accepted-empty')
  @HttpCode(204)
  @Idempotent('shop.accepted-empty')
  acceptedEmpty(): void {
    this.runs.hit('accepted-empty');
  }
}

/** One handler, inherited by two controllers that protect it as two operations. */
@Injectable()
abstract class CreateController {
  constructor(protected readonly runs: Runs) {}

  @Post()
  create(@Body() body: { item: string; amountCents: number }) {
    return { created: this.runs.hit(`create:${this.constructor.name}`), ...body };
  }
}

@Controller('orders-b')
@Idempotent('shop.orders-b')
class OrdersBController extends CreateController {}

@Controller('refunds-b')
@Idempotent('shop.refunds-b', { fingerprintFields: ['amountCents'] })
class RefundsBController extends CreateController {}

/** Protected twice, by the class and by the method: one execution, under the method's operation. */
@Controller('both')
@Idempotent('shop.both-class')
class BothController {
  constructor(private readonly runs: Runs) {}

  @Post()
  @Idempotent('shop.both', { maxWaitMs: 2_000 })
  create() {
    return { run: this.runs.hit('both') };
  }
}

export type Adapter = 'fastify' | 'express';

export interface ShopApp {
  app: INestApplication;
  url: string;
  runs: Runs;
  store: IdempotencyStore;
}

/** What a compression plugin does in Fastify (`@fastify/compress`): gzip JSON answers for clients that accept it. */
async function gzipWhenAccepted(
  request: { headers: Record<string, unknown> },
  reply: { getHeader(name: string): unknown; header(name: string, value: string): void },
  payload: unknown,
) {
  const accepts = String(request.headers['accept-encoding'] ?? '').includes('gzip');
  if (!accepts || typeof payload !== 'string' || !String(reply.getHeader('content-type') ?? '').startsWith('application/json'))
    return payload;
  reply.header('content-encoding', 'gzip');
  reply.header('vary', 'accept-encoding');
  return gzipSync(payload);
}

/**
 * Boot the shop on `adapter`; `options` reach `IdempotencyModule.forRoot` as
 * given, but for `logger`, the app's logger (silent by default).
 */
export async function bootShop(
  adapter: Adapter,
  {
    logger = false,
    globalPipes = [],
    runner,
    ...options
  }: Partial<IdempotencyModuleOptions> & {
    logger?: LoggerService | false;
    globalPipes?: PipeTransform[];
    runner?: Type<IdempotencyRunner>;
  } = {},
): Promise<ShopApp> {
  const store = options.store ?? new MemoryStore();
  const runs = new Runs();
  @Module({
    imports: [IdempotencyModule.forRoot({ service: 'shop', store, maxResponseBytes: 2048, metrics: false, ...options })],
    controllers: [ShopController, OrdersBController, RefundsBController, BothController],
    providers: [
      { provide: Runs, useValue: runs },
      { provide: APP_GUARD, useClass: TenantGuard },
      { provide: APP_INTERCEPTOR, useClass: ClassSerializerInterceptor },
      // An app's own runner (one that identifies requests its own way), provided as IdempotencyRunner's TSDoc says.
      ...(runner ? [{ provide: IdempotencyRunner, useClass: runner }] : []),
    ],
  })
  class ShopModule implements NestModule {
    configure(consumer: MiddlewareConsumer) {
      // Headers of every answer, set before any handler: a replay keeps them.
      consumer
        .apply((_req: unknown, res: { setHeader(name: string, value: string): void }, next: () => void) => {
          res.setHeader('content-security-policy', "default-src 'self'");
          res.setHeader('access-control-allow-origin', 'https://shop.example');
          next();
        })
        .forRoutes('*');
    }
  }
  const app = await NestFactory.create(ShopModule, adapter === 'fastify' ? new FastifyAdapter() : new ExpressAdapter(), {
    logger,
    abortOnError: false,
  });
  if (adapter === 'fastify') app.getHttpAdapter().getInstance().addHook('onSend', gzipWhenAccepted);
  app.useGlobalPipes(...globalPipes);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), runs, store };
}
