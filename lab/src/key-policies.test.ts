import { IDEMPOTENCY_MODULE_OPTIONS, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { TEST_CREDENTIALS } from './testing';
import { outboundKeyPolicy, PER_ATTEMPT } from './key-policies';
import { createLabApp } from './lab-app';
import { loadLabConfig } from './lab-config';
import { CHAIN, type ServiceName } from './services';

/** The key mode the service's routes get when the lab runs its own module under `KEY_POLICY`. */
async function routeKeyMode(service: ServiceName, KEY_POLICY: string) {
  const lab = loadLabConfig({ KEY_POLICY });
  const app = await createLabApp(service, await CHAIN[service]({ ...TEST_CREDENTIALS, LOG_LEVEL: 'silent' }, lab), lab);
  try {
    return app.get<IdempotencyModuleOptions>(IDEMPOTENCY_MODULE_OPTIONS).keyMode ?? 'required';
  } finally {
    await app.close();
  }
}

describe('the lab policies', () => {
  it('mints a key per attempt only in the outermost retry loop under per-attempt', () => {
    expect(outboundKeyPolicy('per-attempt', 'gateway')).toBe(PER_ATTEMPT);
    expect(outboundKeyPolicy('per-attempt', 'orders')).toBe('propagated');
    expect(PER_ATTEMPT.attemptKey!(undefined, 1)).not.toBe(PER_ATTEMPT.attemptKey!(undefined, 2));
  });

  it("maps each policy to how a service keys its route, over the apps' own modules", async () => {
    expect(await routeKeyMode('payments', 'none')).toBe('none');
    expect(await routeKeyMode('payments', 'propagated')).toBe('required');
    expect(await routeKeyMode('gateway', 'propagated')).toBe('fingerprint');
    expect(await routeKeyMode('gateway', 'per-attempt')).toBe('optional');
    expect(await routeKeyMode('payments', 'fingerprint')).toBe('fingerprint');
    expect(outboundKeyPolicy('fingerprint', 'orders')).toBe('none');
  });
});
