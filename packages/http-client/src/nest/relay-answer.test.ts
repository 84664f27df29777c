import { BadGatewayException, GatewayTimeoutException, HttpException } from '@nestjs/common';
import { reply, startClient, type ClientUnderTest } from '../fault-server.test-support';
import { isCustomerAnswer, relayAnswer, type RelayOptions } from './relay-answer';

// A real server behind a real client: only what the call ended with differs from case to case.
describe('relayAnswer', () => {
  let under: ClientUnderTest | undefined;
  afterEach(async () => {
    await under?.client.close();
    await under?.server.close();
    under = undefined;
  });
  const call = async (script: Parameters<typeof startClient>[0], options?: Parameters<typeof startClient>[1], relay?: RelayOptions) => {
    under = await startClient(script, options);
    return relayAnswer(under.client.post<unknown>('/charges', { amountCents: 500 }), relay);
  };
  const status = (error: unknown) => [(error as HttpException).constructor, (error as HttpException).getStatus()];

  it('returns the body of a success', async () => {
    expect(await call(() => reply(201, {}, { chargeId: 'ch_1' }))).toEqual({ chargeId: 'ch_1' });
  });

  it('throws a refusal with its own status and body', async () => {
    const problem = { type: 'urn:idempotency-chain:problem:key-reused', status: 422 };
    const error = await call(() => reply(422, { 'content-type': 'application/problem+json' }, JSON.stringify(problem))).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HttpException);
    expect([(error as HttpException).getStatus(), (error as HttpException).getResponse()]).toEqual([422, problem]);
  });

  it.each([400, 402, 409, 422])("relays the customer's %i (a decline, a conflict, a validation error) as it is", async (code) => {
    const problem = { type: 'https://payments.example/problems/declined', status: code };
    const error = await call(() => reply(code, { 'content-type': 'application/problem+json' }, JSON.stringify(problem))).catch(
      (e: unknown) => e,
    );
    expect(status(error)).toEqual([HttpException, code]);
    expect((error as HttpException).getResponse()).toEqual(problem);
    expect(under!.server.seen).toHaveLength(1);
  });

  it.each([401, 403, 404, 405, 407, 410, 500, 501])("turns the next hop's %i, an answer about this hop, into a 502", async (code) => {
    const error = await call(() => reply(code, {}, { message: 'token expired', secret: 'internal' })).catch((e: unknown) => e);
    expect(status(error)).toEqual([BadGatewayException, 502]);
    expect((error as HttpException).message).toMatch(new RegExp(`next hop answered ${code}`));
    expect(JSON.stringify((error as HttpException).getResponse())).not.toContain('internal'); // not the customer's to read
  });

  it.each([301, 302, 303, 304, 307, 308])("turns the next hop's %i, a redirect not followed, into a 502, never a success", async (code) => {
    const error = await call(() => reply(code, { location: 'https://login.example/' }, '')).catch((e: unknown) => e);
    expect(status(error)).toEqual([BadGatewayException, 502]);
    expect((error as HttpException).message).toMatch(new RegExp(`next hop answered ${code}`));
  });

  it.each(['invalid-key', 'missing-key'])("turns the next hop's 400 %s, about the key this hop sent, into a 502", async (kind) => {
    const problem = { type: `urn:idempotency-chain:problem:${kind}`, status: 400 };
    const error = await call(() => reply(400, { 'content-type': 'application/problem+json' }, JSON.stringify(problem))).catch(
      (e: unknown) => e,
    );
    expect(status(error)).toEqual([BadGatewayException, 502]);
  });

  it("relays what a rule of its own calls the customer's answer", async () => {
    const relay: RelayOptions = { isCustomerAnswer: (r) => r.status === 404 || isCustomerAnswer(r) };
    const error = await call(() => reply(404, {}, { message: 'no such product' }), {}, relay).catch((e: unknown) => e);
    expect(status(error)).toEqual([HttpException, 404]);
  });

  it('throws 502 when a reply without a key was lost and may not be retried', async () => {
    const error = await call(() => ({ drop: true }), { keyPolicy: 'none' }).catch((e: unknown) => e);
    expect(status(error)).toEqual([BadGatewayException, 502]);
    expect(under!.server.seen).toHaveLength(1);
  });

  it('throws 502 when the answer is over maxResponseBytes', async () => {
    const error = await call(() => ({ stream: 2048 }), { maxResponseBytes: 1024 }).catch((e: unknown) => e);
    expect(status(error)).toEqual([BadGatewayException, 502]);
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
