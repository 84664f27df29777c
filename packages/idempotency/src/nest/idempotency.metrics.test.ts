import { Registry } from 'prom-client';
import { IdempotencyOutcome } from '../observer';
import { IdempotencyMetrics } from './idempotency.metrics';

describe('IdempotencyMetrics', () => {
  it('shares the metrics of a registry instead of failing on duplicate registration', async () => {
    const registry = new Registry();
    const first = new IdempotencyMetrics({ registry });
    const second = new IdempotencyMetrics({ registry });
    const event = { service: 's', operation: 'o', keyHash: 'abc', outcome: IdempotencyOutcome.Executed };

    first.record(event);
    second.record(event);
    second.claimLatency('s', 'o', 2);
    first.record({ ...event, outcome: IdempotencyOutcome.IsFinalThrew, error: new Error('isFinal bug') });

    const text = await registry.metrics();
    expect(text).toContain('idempotency_events_total{service="s",operation="o",outcome="executed"} 2');
    expect(text).toContain('idempotency_events_total{service="s",operation="o",outcome="is_final_threw"} 1');
    expect(text).toContain('idempotency_claim_duration_seconds_bucket{le="0.0025",service="s",operation="o"} 1');
  });
});
