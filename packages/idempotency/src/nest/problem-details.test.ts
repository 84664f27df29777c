import { BadRequestException, HttpException } from '@nestjs/common';
import { errorCodes } from 'fastify';
import { InFlightError, StoreUnavailableError } from '../errors';
import { toProblem } from './problem-details';

describe('toProblem', () => {
  it('maps an idempotency error to its status, its stable type and Retry-After', () => {
    const { document, headers } = toProblem(new InFlightError('still running', 4), '/charges');

    expect(document).toEqual({
      type: 'urn:idempotency-chain:problem:in-flight',
      title: 'Conflict',
      status: 409,
      detail: 'still running',
      instance: '/charges',
    });
    expect(headers).toEqual({ 'retry-after': '4' });
    expect(toProblem(new StoreUnavailableError('down')).headers).toEqual({ 'retry-after': '1' });
  });

  it("maps an HttpException to its status, 'about:blank', and its messages as errors", () => {
    const { document } = toProblem(new BadRequestException(['orderId must be a string', 'amountCents must be an integer']));

    expect(document).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'orderId must be a string; amountCents must be an integer',
      errors: ['orderId must be a string', 'amountCents must be an integer'],
    });
    expect(toProblem(new HttpException('slow down', 429)).document).toMatchObject({ status: 429, detail: 'slow down' });
  });

  it("maps Fastify's and body-parser's client errors to the status they carry", () => {
    const tooLarge = Object.assign(new Error('request entity too large'), {
      status: 413,
      statusCode: 413,
      expose: true,
      type: 'entity.too.large',
    });

    expect(toProblem(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE()).document).toMatchObject({ status: 413, title: 'Payload Too Large' });
    expect(toProblem(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY()).document).toMatchObject({ status: 400 });
    expect(toProblem(tooLarge).document).toMatchObject({ status: 413, detail: 'request entity too large' });
  });

  it('answers anything else 500 without its message, and marks it unexpected', () => {
    const internal = Object.assign(new Error('password=hunter2'), { statusCode: 400 });
    const problem = toProblem(internal);

    expect(problem.document).toEqual({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      detail: 'An unexpected error occurred',
    });
    expect(problem.unexpected).toBe(true);
    expect(toProblem('a string').document.status).toBe(500);
  });
});
