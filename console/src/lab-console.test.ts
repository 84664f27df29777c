import type { FaultChoice } from './faults';
import { Refusal } from './checkout-request';
import { LabConsole } from './lab-console';
import type { Snapshot } from './snapshot';

// Real services on Redis: a restart of payments and a store outage, on a loaded machine.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });
const SETTLE_BOUND_MS = 240_000;

const NO_FAULTS: FaultChoice = { slowFirstAttempt: false, lostReplies: [], paymentsCrash: false, storeDown: false };

const lab = new LabConsole(() => undefined);

beforeAll(async () => {
  await lab.start();
  // Both faults here need a Redis the console can stop, and a ledger that outlives payments.
  expect(lab.snapshot().store).toMatchObject({ kind: 'redis', down: false });
  expect(lab.snapshot().store?.outageUnavailable).toBeUndefined();
});

afterAll(async () => {
  await lab.close();
});

/** The snapshot once `action` has settled and the console is free again. */
function settled(action: number): Promise<Snapshot> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const snapshot = lab.snapshot();
      if (snapshot.busy || (snapshot.current?.action ?? 0) < action) return;
      if (snapshot.current?.phase !== 'settled')
        return finish(() => reject(new Error(`action ${action} ended ${snapshot.current?.phase}: ${snapshot.current?.notes.join('; ')}`)));
      finish(() => resolve(snapshot));
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`action ${action} did not settle within ${SETTLE_BOUND_MS} ms`))),
      SETTLE_BOUND_MS,
    );
    const stop = lab.onChange(check);
    const finish = (end: () => void) => {
      clearTimeout(timer);
      stop();
      end();
    };
    check();
  });
}

describe('the console’s faults, on real services', () => {
  it('payments killed after the charge: started again at once, the charge kept and counted once', async () => {
    const snapshot = await settled(lab.startCheckout({ mode: 'pay', policy: 'propagated', faults: { ...NO_FAULTS, paymentsCrash: true } }));
    expect(snapshot.current?.charges).toHaveLength(1);
    expect(snapshot.current?.notes.join('\n')).toMatch(/^payments exited and was started again in \d+ ms$/m);
    expect(snapshot.current?.steps.some((step) => step.kind === 'lost' && step.from === 'Payments')).toBe(true);
    expect(snapshot.labs.propagated).toEqual({ state: 'ready' });
  });

  it('store down: the press is refused 503 before anything runs; back up, the same key is charged once', async () => {
    const down = await settled(lab.startCheckout({ mode: 'pay', policy: 'propagated', faults: { ...NO_FAULTS, storeDown: true } }));
    expect(down.store?.down).toBe(true);
    expect(down.current?.answers.map((a) => a.status)).toEqual([503]);
    expect(down.current?.charges).toHaveLength(0);

    const up = await settled(lab.startCheckout({ mode: 'again', faults: NO_FAULTS }));
    expect(up.store?.down).toBe(false);
    expect(up.current?.answers.map((a) => a.status)).toEqual([503, 201]);
    expect(up.current?.charges).toHaveLength(1);
    expect(up.current?.notes).toContain('Press again: the idempotency store is up again');
  });

  it('takes one action at a time: another is refused while one runs, and accepted once it is over', async () => {
    const first = lab.startCheckout({ mode: 'pay', policy: 'propagated', faults: NO_FAULTS });
    expect(() => lab.startCheckout({ mode: 'again', faults: NO_FAULTS })).toThrow(Refusal);
    expect(() => lab.playWriteUp()).toThrow(/^busy: /);
    await settled(first);
    await settled(lab.startCheckout({ mode: 'again', faults: NO_FAULTS }));
  });
});
