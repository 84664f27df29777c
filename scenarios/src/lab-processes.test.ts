import { Lab } from './lab-processes';
import type { LabEvent } from './timeline';

// Six real Node processes on a shared 2-core machine.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

function portsOf(lab: Lab): number[] {
  return (['gateway', 'orders', 'payments'] as const).map((service) => Number(new URL(lab.url(service)).port));
}

describe('a lab on free ports', () => {
  // Nothing here holds the fixed ports to prove the point: other people's labs may need them right now.
  it('starts beside another lab, away from the fixed ports of `npm start` (3000-3002) and of the old runner (3100-3102)', async () => {
    const seen: LabEvent[][] = [[], []];
    const labs = [0, 1].map(
      (index) =>
        new Lab({
          env: { IDEMPOTENCY_STORE: 'memory', KEY_POLICY: 'propagated', LOG_LEVEL: 'info' },
          onEvent: (event) => seen[index]!.push(event),
        }),
    );
    try {
      await Promise.all(labs.map((lab) => lab.start()));
      const ports = labs.flatMap(portsOf);
      expect(new Set(ports).size).toBe(6);
      for (const port of ports) expect([3000, 3001, 3002, 3100, 3101, 3102]).not.toContain(port);
      for (const [index, lab] of labs.entries()) {
        const orderId = `order-ports-${index}`;
        const response = await fetch(`${lab.url('gateway')}/checkout`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: lab.authorization('acct-42'),
            'idempotency-key': `ports-${index}-${Date.now()}`,
          },
          body: JSON.stringify({ orderId, account: 'acct-42', amountCents: 500 }),
        });
        expect(response.status).toBe(201);
        const ledger = (await (
          await fetch(`${lab.url('payments')}/charges?orderId=${orderId}`, { headers: lab.ledgerHeaders() })
        ).json()) as { count: number };
        expect(ledger.count).toBe(1);
        // The live listener is told of every event the timeline keeps, as it is kept.
        expect(seen[index]).toEqual(lab.events);
        expect(seen[index]!.some((event) => event.service === 'payments' && event.event === 'idempotency')).toBe(true);
      }
    } finally {
      await Promise.all(labs.map((lab) => lab.stop()));
    }
  });
});
