import { rpcBody, rpcKey } from '../rpc/rpc-message';
import { requestDeadline, requestTarget } from './http-request';

describe('reading a request', () => {
  it('reads the concrete path and the query as sent, never the route template', () => {
    const base = { method: 'POST', headers: {} };

    expect(requestTarget({ ...base, url: '/orders/42/refund?debug=1&a=2' })).toEqual({ path: '/orders/42/refund', query: 'debug=1&a=2' });
    expect(requestTarget({ ...base, url: '/orders/42' })).toEqual({ path: '/orders/42', query: '' });
    // Express: a router mounted at /v1 strips it from `url`; `originalUrl` keeps it.
    expect(requestTarget({ ...base, url: '/orders/42?x', originalUrl: '/v1/orders/42?x' })).toEqual({ path: '/v1/orders/42', query: 'x' });
  });

  it('turns request-timeout-ms into an absolute deadline and ignores garbage', () => {
    const at = (value?: string) => requestDeadline({ method: 'POST', headers: { 'request-timeout-ms': value } }, 1_000);

    expect(at('250')).toBe(1_250);
    expect(at('0')).toBe(1_000);
    for (const garbage of [undefined, '', 'abc', '-5', '1e3', '2.5', '99999999999']) expect(at(garbage)).toBeUndefined();
  });

  it('takes an RPC key from transport headers first, then from the payload', () => {
    const rmq = { getMessage: () => ({ properties: { headers: { 'idempotency-key': 'from-rmq' } } }), getChannelRef: () => ({}) };
    const natsHeaders = (entries: Record<string, string>) => ({
      values: (name: string) => Object.entries(entries).flatMap(([key, value]) => (key.toLowerCase() === name ? [value] : [])),
    });
    const nats = (entries: Record<string, string>) => ({ getSubject: () => 'charge', getHeaders: () => natsHeaders(entries) });
    const mqtt = { getTopic: () => 'charge', getPacket: () => ({ properties: { userProperties: { 'Idempotency-Key': 'from-mqtt' } } }) };
    const redis = { getChannel: () => 'charge', getMetadata: () => ({ 'idempotency-key': 'from-metadata' }) };
    const payload = { idempotencyKey: 'from-payload', amountCents: 5 };

    expect(rpcKey(payload, rmq)).toBe('from-rmq');
    expect(rpcKey(payload, nats({ 'Idempotency-Key': 'from-nats' }))).toEqual(['from-nats']);
    // MsgHdrs answers a header it lacks with '': that is no key, the payload's is.
    expect(rpcKey(payload, nats({ traceparent: '00' }))).toBe('from-payload');
    expect(rpcKey(payload, mqtt)).toEqual(['from-mqtt']);
    expect(rpcKey(payload, { getTopic: () => 'charge', getPacket: () => ({ properties: {} }) })).toBe('from-payload');
    expect(rpcKey(payload, redis)).toBe('from-metadata');
    expect(rpcKey(payload, { getChannel: () => 'charge', getMetadata: () => undefined })).toBe('from-payload');
    expect(rpcKey(payload, { getPattern: () => 'charge' })).toBe('from-payload');
    expect(rpcKey('not an object', undefined)).toBeUndefined();
    expect(rpcBody(payload)).toEqual({ amountCents: 5 });
  });
});
