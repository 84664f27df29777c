import { rpcBody, rpcKey } from './rpc-message';

describe('reading a message', () => {
  it('takes the key from the transport’s headers first, then from the payload, and fingerprints the payload without it', () => {
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
