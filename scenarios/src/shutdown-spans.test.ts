import { randomUUID } from 'node:crypto';
import { Lab, SERVICES } from './lab-processes';
import { OtlpReceiver } from './otlp-receiver.test-support';
import { callerFor, press } from './write-up';

// Three service processes, one checkout and a graceful stop: well within this bound on a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** Longer than the test: no span leaves on the exporter's schedule, only when a service shuts down. */
const NEVER_MS = '600000';

/**
 * A service stopped with SIGTERM (a deploy, a scale-in) sends the spans it
 * still buffers before it exits: the last requests it served are the ones an
 * operator looks for, and they would otherwise be lost with the process.
 */
describe('graceful shutdown and traces', () => {
  let receiver: OtlpReceiver;
  let lab: Lab;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    lab = new Lab({
      env: {
        KEY_POLICY: 'propagated',
        IDEMPOTENCY_STORE: 'memory',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: NEVER_MS,
      },
    });
    await lab.start();
  });

  afterAll(async () => {
    await lab?.stop();
    await receiver?.close();
  });

  it('sends every service’s buffered spans of the last checkout when it is stopped, before it exits', async () => {
    const caller = callerFor(lab, 'propagated', 'acct-7');
    const answer = await press(caller, { orderId: `order-${randomUUID().slice(0, 8)}`, account: 'acct-7', amountCents: 300 }, randomUUID());
    await caller.close();
    expect(answer).toMatchObject({ answered: true, status: 201 });
    expect(receiver.spans).toEqual([]); // still buffered in the services

    await lab.stop();

    const checkout = receiver.spans.filter(
      (span) => span.attributes['url.path'] === '/checkout' || span.attributes['idempotency.key_hash'] !== undefined,
    );
    expect(new Set(checkout.map((span) => span.service))).toEqual(new Set(SERVICES));
  });
});
