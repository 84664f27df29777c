import { BadGatewayException, GatewayTimeoutException, HttpException } from '@nestjs/common';
import { reply, startClient, type ClientUnderTest } from '../fault-server.test-support';
import { relayAnswer } from './relay-answer';

// A real server behind a real client: only what the call ended with differs from case to case.
describe('relayAnswer', () => {
  let under: ClientUnderTest | undefined;
  afterEach(async () => {
    await under?.client.close();
    await under?.server.close();
    under = undefined;
  });
  const call = async (...args: Parameters<typeof startClient>) => {
    under = await startClient(...args);
    return relayAnswer(under.client.post<unknown>('/charges', { amountCents: 500 }));
  };

  it('returns the body of a success', async () => {
    expect(await call(() => reply(201, {}, { chargeId: 'ch_1' }))).toEqual({ chargeId: 'ch_1' });
  });

  it('throws a refusal with its own status and body', async () => {
    const problem = { type: 'urn:idempotency-chain:problem:key-reused', status: 422 };
    const error = await call(() => reply(422, { 'content-type': 'application/problem+json' }, JSON.stringify(problem))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpException);
    expect([(error as HttpException).getStatus(), (error as HttpException).getResponse()]).toEqual([422, problem]);
  });

  it('throws 502 when every attempt ended without an answer', async () => {
    const error = await call(() => ({ drop: true }), { maxAttempts: 2, backoff: { initialMs: 1, maxMs: 1 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadGatewayException);
    expect(under!.server.seen).toHaveLength(2);
  });

  it('throws 504 when the deadline ran out first', async () => {
    const error = await call(() => ({ hang: true }), { deadlineMs: 100, attemptTimeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayTimeoutException);
  });

  it('throws anything else as it is', async () => {
    const bug = new TypeError('not an HTTP outcome');
    await expect(relayAnswer(Promise.reject(bug))).rejects.toBe(bug);
  });
});
