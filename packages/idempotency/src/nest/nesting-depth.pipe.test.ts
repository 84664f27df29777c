import { Body, Controller, Module, Post, Query, ValidationPipe, type INestApplication, type LoggerService } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { IsInt, IsString } from 'class-validator';
import { NestingDepthPipe } from './nesting-depth.pipe';
import { ProblemDetailsFilter } from './problem-details.filter';

class OrderDto {
  @IsString() orderId!: string;
  @IsInt() amountCents!: number;
}

@Controller()
class OrderController {
  @Post('orders')
  place(@Body() body: OrderDto, @Query() query: Record<string, unknown>) {
    return { orderId: body.orderId, query };
  }
}

/** `depth` levels of `{"a":…}` under `x`, or of `[…]`: the body's own object is one level more. */
const nested = (depth: number, kind: 'object' | 'array') =>
  `{"orderId":"o-1","amountCents":5,"x":` +
  (kind === 'object' ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth)) +
  '}';

describe.each(['fastify', 'express'] as const)('NestingDepthPipe ahead of ValidationPipe (%s)', (adapter) => {
  let app: INestApplication;
  let url: string;
  const errors: string[] = [];

  beforeAll(async () => {
    @Module({ controllers: [OrderController], providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }] })
    class OrderModule {}
    const logger: LoggerService = { log: () => undefined, warn: () => undefined, error: (message: string) => errors.push(String(message)) };
    const moduleRef = await Test.createTestingModule({ imports: [OrderModule] }).compile();
    app = moduleRef.createNestApplication(adapter === 'fastify' ? new FastifyAdapter({ bodyLimit: 64 * 1024 }) : new ExpressAdapter(), {
      logger,
    });
    app.useGlobalPipes(new NestingDepthPipe(), new ValidationPipe({ whitelist: true, transform: true }));
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(() => app.close());

  const post = async (body: string, query = '') => {
    const response = await fetch(`${url}/orders${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      json: (await response.json()) as Record<string, unknown>,
    };
  };

  it.each([
    ['objects', 'object', 10_000],
    ['arrays', 'array', 32_000],
  ] as const)('refuses a body of %s nested thousands deep under 64 KiB with 400 problem+json, logging no error', async (_, kind, depth) => {
    const body = nested(depth, kind);
    expect(body.length).toBeLessThan(64 * 1024);
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.type).toMatch(/^application\/problem\+json/);
    expect(answer.json).toMatchObject({ status: 400, detail: 'The request body is nested deeper than 32 levels', instance: '/orders' });
    expect(errors).toEqual([]);
  });

  it('lets a body nested up to the limit through to validation', async () => {
    // 31 levels under `x`, 32 with the body's own object.
    expect(await post(nested(31, 'array'))).toMatchObject({ status: 201, json: { orderId: 'o-1' } });
    expect((await post(nested(32, 'array'))).status).toBe(400);
    expect(await post('{"orderId":7}')).toMatchObject({
      status: 400,
      json: { errors: expect.arrayContaining(['orderId must be a string']) },
    });
  });

  it('passes a flat query through', async () => {
    expect(await post('{"orderId":"o-1","amountCents":5}', '?a=1')).toMatchObject({ status: 201, json: { query: { a: '1' } } });
  });
});

describe('NestingDepthPipe', () => {
  it('refuses a limit that is not a positive integer, and measures a deep query as it does a body', () => {
    expect(() => new NestingDepthPipe(0)).toThrow(RangeError);
    const pipe = new NestingDepthPipe(2);
    expect(pipe.transform({ a: { b: 1 } }, { type: 'query' })).toEqual({ a: { b: 1 } });
    expect(() => pipe.transform({ a: { b: {} } }, { type: 'query' })).toThrow('The request query is nested deeper than 2 levels');
    const deepParam = { a: { b: { c: {} } } };
    expect(pipe.transform(deepParam, { type: 'custom' })).toBe(deepParam);
  });
});
