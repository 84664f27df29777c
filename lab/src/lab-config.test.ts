import { ConfigError } from './environment';
import { loadLabConfig } from './lab-config';

describe('loadLabConfig', () => {
  it('runs the services as they are by default: the propagated policy, no naive variant, orders over HTTP', () => {
    expect(loadLabConfig({})).toEqual({ keyPolicy: 'propagated', naive: new Set(), chargeTransport: 'http' });
    expect(loadLabConfig({ KEY_POLICY: 'none', LAB_NAIVE: 'plain-ledger, no-heartbeat', CHARGE_TRANSPORT: 'amqp' })).toEqual({
      keyPolicy: 'none',
      naive: new Set(['plain-ledger', 'no-heartbeat']),
      chargeTransport: 'amqp',
    });
  });

  it("reads where payments' ledger is kept on Redis, unset by default: the records' Redis", () => {
    expect(loadLabConfig({}).ledgerRedisUrl).toBeUndefined();
    expect(loadLabConfig({ LEDGER_REDIS_URL: 'redis://127.0.0.1:6390' }).ledgerRedisUrl).toBe('redis://127.0.0.1:6390');
  });

  it.each([
    ['KEY_POLICY', 'sometimes', /KEY_POLICY="sometimes" is not valid: expected one of none, per-attempt, propagated, fingerprint/],
    [
      'LAB_NAIVE',
      'no-ledger',
      /LAB_NAIVE="no-ledger" is not valid: expected a comma-separated list of cache-failures, no-heartbeat, plain-ledger/,
    ],
    ['CHARGE_TRANSPORT', 'smtp', /CHARGE_TRANSPORT="smtp" is not valid: expected one of http, amqp, nats/],
    [
      'LEDGER_REDIS_URL',
      'http://127.0.0.1:6390',
      /LEDGER_REDIS_URL="http:\/\/127.0.0.1:6390" is not valid: expected a URL \(redis: or rediss:\)/,
    ],
  ])('refuses %s=%s with a message naming it', (name, value, message) => {
    expect(() => loadLabConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadLabConfig({ [name]: value })).toThrow(message);
  });
});
