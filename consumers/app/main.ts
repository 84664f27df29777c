/**
 * The whole scratch consumer app: what a NestJS team writes after installing
 * the two packages, using their public entries only. The consumer test
 * compiles this one file as CommonJS, as ESM and with the old `node10`
 * resolution, against each NestJS major, and calls it over HTTP.
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Body, Controller, ForbiddenException, Module, Post, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RequestContextMiddleware } from '@idempotency-chain/http-client/nest';
import { Idempotent, IdempotencyModule } from '@idempotency-chain/idempotency/nest';
import { createRedisClient, RedisStore } from '@idempotency-chain/idempotency/redis';

// Never connected here: IdempotencyModule connects the store at boot (and, under closeStore, closes it with the app).
const redis = createRedisClient(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const store = new RedisStore({ client: redis, prefix: process.env.STORE_PREFIX ?? 'consumer:', ownsClient: true });

@Controller('charges')
class ChargesController {
  @Post()
  @Idempotent('consumer.charge')
  charge(@Body() body: { amountCents: number }) {
    // A final 4xx: the library must see the app's HttpException as one, store it and replay it.
    if (body.amountCents > 100_000) throw new ForbiddenException('amountCents is over the limit');
    return { chargeId: randomUUID(), amountCents: body.amountCents };
  }
}

@Module({
  imports: [
    IdempotencyModule.forRoot({
      service: 'consumer',
      store,
      closeStore: true,
      scope: (context) => String(context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>().headers['x-tenant']),
    }),
  ],
  controllers: [ChargesController],
  // No ProblemDetailsFilter: the library's errors are HttpExceptions any app answers with their status.
})
class AppModule implements NestModule {
  configure(consumer: MiddlewareConsumer) {
    consumer.apply(RequestContextMiddleware).forRoutes(ChargesController);
  }
}

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  await app.listen(0, '127.0.0.1');
  // The test reads the port from this line.
  console.log(JSON.stringify({ listening: new URL(await app.getUrl()).port }));
}

void bootstrap();
