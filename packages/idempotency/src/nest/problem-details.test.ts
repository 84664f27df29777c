import { BadRequestException, Controller, Get, HttpException, Module, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { errorCodes } from 'fastify';
import { InFlightError, SchemaVersionError, StoreRefusedError, StoreUnavailableError } from '../errors';
import { IdempotencyException } from './idempotency.exception';
import { problemOf } from './problem-details';
import { ProblemDetailsFilter } from './problem-details.filter';

describe('problemOf', () => {
  it('maps an idempotency error to its status, its stable type and Retry-After', () => {
    const { document, headers } = problemOf(new InFlightError('still running', 4), '/charges');

    expect(document).toEqual({
      type: 'urn:idempotency-chain:problem:in-flight',
      title: 'Conflict',
      status: 409,
      detail: 'still running',
      instance: '/charges',
    });
    expect(headers).toEqual({ 'retry-after': '4' });
    expect(problemOf(new StoreUnavailableError('down')).headers).toEqual({ 'retry-after': '1' });
  });

  it("keeps a refusing or outdated store's message for its operators: the caller is told what, not the roles and grants", () => {
    const refused = new StoreRefusedError('permission denied for table idempotency_records: GRANT SELECT ON "idem".records TO "app_7"');
    const behind = new SchemaVersionError('idem_payments', 1, 2);
    for (const error of [refused, behind]) {
      for (const { document } of [problemOf(error), problemOf(new IdempotencyException(error))]) {
        expect(document).toMatchObject({ status: 500, type: error.problemType });
        expect(document.detail).toBe('The idempotency store cannot serve this service as it is configured; the request was not executed');
      }
    }
  });

  it("maps an HttpException to its status, 'about:blank', and its messages as errors", () => {
    const { document } = problemOf(new BadRequestException(['orderId must be a string', 'amountCents must be an integer']));

    expect(document).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'orderId must be a string; amountCents must be an integer',
      errors: ['orderId must be a string', 'amountCents must be an integer'],
    });
    expect(problemOf(new HttpException('slow down', 429)).document).toMatchObject({ status: 429, detail: 'slow down' });
  });

  it("maps Fastify's and body-parser's client errors to the status they carry", () => {
    const tooLarge = Object.assign(new Error('request entity too large'), {
      status: 413,
      statusCode: 413,
      expose: true,
      type: 'entity.too.large',
    });

    expect(problemOf(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE()).document).toMatchObject({ status: 413, title: 'Payload Too Large' });
    expect(problemOf(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY()).document).toMatchObject({ status: 400 });
    expect(problemOf(tooLarge).document).toMatchObject({ status: 413, detail: 'request entity too large' });
  });

  it('answers anything else 500 without its message, and marks it unexpected', () => {
    const internal = Object.assign(new Error('password=hunter2'), { statusCode: 400 });
    const problem = problemOf(internal);

    expect(problem.document).toEqual({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      detail: 'An unexpected error occurred',
    });
    expect(problem.unexpected).toBe(true);
    expect(problemOf('a string').document.status).toBe(500);
  });
});

@Controller('health')
class FailingHealthController {
  constructor(private readonly health: HealthCheckService) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([
      async () => ({ process: { status: 'up' as const } }),
      async () => ({ idempotencyStore: { status: 'down' as const, message: 'connect ECONNREFUSED 10.0.0.7:5432' } }),
    ]);
  }
}

describe.each(['fastify', 'express'] as const)('ProblemDetailsFilter on a failed @nestjs/terminus health check (%s)', (adapter) => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    @Module({
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [FailingHealthController],
      providers: [{ provide: APP_FILTER, useClass: ProblemDetailsFilter }],
    })
    class HealthModule {}
    const moduleRef = await Test.createTestingModule({ imports: [HealthModule] }).compile();
    app = moduleRef.createNestApplication(adapter === 'fastify' ? new FastifyAdapter() : new ExpressAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(() => app.close());

  it('answers 503 problem+json that names what is down and carries each check, without the reasons', async () => {
    const response = await fetch(`${url}/health`);

    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: 'Health check failed: idempotencyStore is down',
      instance: '/health',
      checks: { process: { status: 'up' }, idempotencyStore: { status: 'down' } },
    });
    expect(text).not.toContain('10.0.0.7');
  });
});
