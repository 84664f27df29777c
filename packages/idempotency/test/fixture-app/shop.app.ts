/**
 * A small shop API written the way a team new to this package would write
 * it: its own guard, DTO classes, a global `ClassSerializerInterceptor`,
 * handlers that set their own status and headers, a file download, path
 * parameters and a query string - and no `ProblemDetailsFilter`. It uses the
 * package's public entry points only, by name.
 */
import {
  Body,
  CanActivate,
  ClassSerializerInterceptor,
  Controller,
  ExecutionContext,
  Injectable,
  Module,
  Param,
  Post,
  Query,
  Res,
  StreamableFile,
  UnauthorizedException,
  type INestApplication,
  type LoggerService,
} from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Exclude } from 'class-transformer';
import { Readable } from 'node:stream';
import { MemoryStore, type IdempotencyStore } from '@idempotency-chain/idempotency';
import { Idempotent, IdempotencyModule, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';

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

@Controller()
class ShopController {
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
    return { run: this.runs.hit('big'), padding: 'x'.repeat(4096) };
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
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return { run };
  }
}

export type Adapter = 'fastify' | 'express';

export interface ShopApp {
  app: INestApplication;
  url: string;
  runs: Runs;
  store: IdempotencyStore;
}

/**
 * Boot the shop on `adapter`; `options` reach `IdempotencyModule.forRoot` as
 * given, but for `logger`, the app's logger (silent by default).
 */
export async function bootShop(
  adapter: Adapter,
  { logger = false, ...options }: Partial<IdempotencyModuleOptions> & { logger?: LoggerService | false } = {},
): Promise<ShopApp> {
  const store = options.store ?? new MemoryStore();
  const runs = new Runs();
  @Module({
    imports: [IdempotencyModule.forRoot({ service: 'shop', store, maxResponseBytes: 2048, metrics: false, ...options })],
    controllers: [ShopController],
    providers: [
      { provide: Runs, useValue: runs },
      { provide: APP_GUARD, useClass: TenantGuard },
      { provide: APP_INTERCEPTOR, useClass: ClassSerializerInterceptor },
    ],
  })
  class ShopModule {}
  const app = await NestFactory.create(ShopModule, adapter === 'fastify' ? new FastifyAdapter() : new ExpressAdapter(), { logger, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1'), runs, store };
}
