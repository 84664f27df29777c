import { hashKey } from '@idempotency-chain/idempotency';
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { chainKeys } from './chain-keys';
import { Lab } from './lab-processes';
import { OtlpReceiver, SpanKindNumber, type ReceivedSpan } from './otlp-receiver.test-support';
import { budgets, callerFor, press, SETUP } from './write-up';

// Three service processes and a slow first charge: well within this bound on a loaded machine.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/** The store of the write-up, as every Redis test here finds it. */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Spans are sent this often (instead of every 5 s), so the test waits on arrivals, not on a clock. */
const EXPORT_EVERY_MS = '100';
/** Bound on the spans of one checkout arriving after it answered. */
const ARRIVAL_BOUND_MS = 30_000;

const isPaymentsDecision = (span: ReceivedSpan) => span.service === 'payments' && span.attributes['idempotency.outcome'] !== undefined;

/**
 * No span of `trace` is missing, as far as its spans can tell: every parent
 * has arrived (but `rootParent`, the caller's), and every client span that
 * got an answer has the server span that gave it. Processes export on their
 * own schedules, so a child can arrive before its parent.
 */
function complete(trace: ReceivedSpan[], rootParent: string): boolean {
  const ids = new Set(trace.map((span) => span.spanId));
  const parents = new Set(trace.map((span) => span.parentSpanId));
  const answered = trace.filter(
    (span) => span.kind === SpanKindNumber.Client && span.attributes['http.response.status_code'] !== undefined,
  );
  return (
    trace.every((span) => span.parentSpanId === undefined || span.parentSpanId === rootParent || ids.has(span.parentSpanId)) &&
    answered.every((span) => parents.has(span.spanId))
  );
}

/**
 * The write-up's checkout under `propagated` (payments slow on the first
 * attempt, orders' first reply lost, then the user's later press), through
 * the three services as processes of the lab, each exporting its spans over
 * real OTLP/HTTP to a receiver in this test. The caller is traced, as a
 * browser with OpenTelemetry would be: both presses carry its `traceparent`.
 * The key travels like a trace id, and the trace shows it.
 */
describe('one checkout under propagated, traced across the three services', () => {
  const key = randomUUID();
  // The caller's own trace and span: what a traced client sends (W3C trace context, sampled).
  const traceId = randomBytes(16).toString('hex');
  const callerSpanId = randomBytes(8).toString('hex');
  let receiver: OtlpReceiver;
  let lab: Lab;
  let checkout: ReceivedSpan[];

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    lab = new Lab({
      env: {
        KEY_POLICY: 'propagated',
        IDEMPOTENCY_STORE: 'redis',
        REDIS_URL,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: EXPORT_EVERY_MS,
      },
      perService: budgets(),
    });
    await lab.start();
    // Staged as runWriteUp stages it: the faults, the press, the settling, the later press.
    await lab.arm('payments', { slowFirstAttemptMs: SETUP.slowFirstAttemptMs });
    await lab.arm('orders', { loseReplies: SETUP.ordersLostReplies });
    const caller = callerFor(lab, 'propagated');
    const order = { orderId: `order-trace-${key.slice(0, 8)}`, account: 'acct-42', amountCents: 500 };
    const traced = { traceparent: `00-${traceId}-${callerSpanId}-01` };
    const pressed = Date.now();
    await press(caller, order, key, traced);
    await sleep(Math.max(0, pressed + SETUP.slowFirstAttemptMs + SETUP.settleMarginMs - Date.now()));
    await lab.arm('payments', {});
    const later = await press(caller, order, key, traced);
    await caller.close();
    expect(later).toMatchObject({ answered: true, status: 201 });
    // Complete once payments' execution and the later press's replay are in, and the trace has no gaps.
    await receiver.until((spans) => {
      const trace = spans.filter((span) => span.traceId === traceId);
      const outcomes = trace.filter(isPaymentsDecision).map((span) => span.attributes['idempotency.outcome']);
      return outcomes.includes('executed') && outcomes.includes('replayed') && complete(trace, callerSpanId);
    }, ARRIVAL_BOUND_MS);
    checkout = receiver.spans.filter((span) => span.traceId === traceId);
  });

  afterAll(async () => {
    await lab?.stop();
    await receiver?.close();
  });

  it("is one trace: every span that carries the key, on every hop, has the caller's trace id", () => {
    const keyed = receiver.spans.filter((span) => span.attributes['idempotency.key_hash'] !== undefined);
    expect(new Set(keyed.map((span) => span.traceId))).toEqual(new Set([traceId]));
    expect(new Set(checkout.map((span) => span.service))).toEqual(new Set(['gateway', 'orders', 'payments']));
    // Every span's parent is in the trace, but the gateway's server spans of the two presses: theirs is the caller's span.
    const ids = new Set(checkout.map((span) => span.spanId));
    const roots = checkout.filter((span) => !span.parentSpanId || !ids.has(span.parentSpanId));
    expect(roots.map((span) => [span.service, span.kind, span.attributes['url.path'], span.parentSpanId])).toEqual([
      ['gateway', SpanKindNumber.Server, '/checkout', callerSpanId],
      ['gateway', SpanKindNumber.Server, '/checkout', callerSpanId],
    ]);
  });

  it('shows payments executing once; every other attempt waited for it, replayed it, was told to retry while it ran, or was given up by its caller', () => {
    const decisions = checkout.filter(isPaymentsDecision);
    const outcomes = decisions.map((span) => span.attributes['idempotency.outcome']);
    expect(outcomes.filter((outcome) => outcome === 'executed')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome !== 'executed').sort()).toEqual(expect.arrayContaining(['replayed']));
    // An attempt whose own deadline ends before the slow first charge does is
    // answered 409 (rejected_in_flight) rather than kept waiting past it, or
    // its caller gives up on it while it waits (abandoned); how many depends
    // on the machine's timing, never on a second execution.
    const others = ['waited', 'replayed', 'rejected_in_flight', 'abandoned'];
    for (const outcome of outcomes.filter((o) => o !== 'executed')) expect(others).toContain(outcome);
    expect(decisions.find((span) => span.attributes['idempotency.outcome'] === 'executed')?.attributes['idempotency.epoch']).toEqual(
      expect.any(Number),
    );
  });

  it('names the Redis commands it traces, and keeps their arguments out: no record, owner or charge', () => {
    const commands = checkout.filter((span) => span.attributes['db.system.name'] === 'redis');
    expect(commands.length).toBeGreaterThan(0);
    for (const span of commands) expect(String(span.attributes['db.query.text'] ?? span.attributes['db.statement'])).toMatch(/^[a-z]+$/i);
    expect(JSON.stringify(checkout.map((span) => span.attributes))).not.toContain('acct-42');
  });

  it("carries on every hop the hash of the intent's key there (derived hop by hop from the caller's), never a key", () => {
    const keys = chainKeys(key, 'acct-42');
    const hashes = checkout.map((span) => span.attributes['idempotency.key_hash']).filter((hash) => hash !== undefined);
    expect(new Set(hashes)).toEqual(new Set(Object.values(keys).map((hop) => hashKey(hop))));
    const services = new Set(checkout.filter((span) => span.attributes['idempotency.key_hash'] !== undefined).map((span) => span.service));
    expect(services).toEqual(new Set(['gateway', 'orders', 'payments']));
    for (const hop of Object.values(keys)) expect(JSON.stringify(checkout)).not.toContain(hop);
  });

  it('makes each retry its own client span with its attempt number, and each server span names the attempt it answered', () => {
    const calls = checkout.filter((span) => span.kind === SpanKindNumber.Client && span.attributes['idempotency.attempt'] !== undefined);
    const attempts = calls.map((span) => [span.attributes['idempotency.attempt'], span.attributes['http.request.resend_count']]);
    expect(attempts).toEqual(
      expect.arrayContaining([
        [1, undefined],
        [2, 1],
      ]),
    );
    for (const [attempt, resends] of attempts) expect(resends).toBe(attempt === 1 ? undefined : Number(attempt) - 1);
    // Each server span below the gateway answered one client span's attempt, and says which.
    const answered = checkout.filter((span) => span.service !== 'gateway' && span.kind === SpanKindNumber.Server);
    expect(answered.length).toBeGreaterThanOrEqual(4);
    for (const span of answered) {
      const call = calls.find((c) => c.spanId === span.parentSpanId);
      expect([span.service, span.attributes['http.request.header.request-attempt']]).toEqual([
        span.service,
        String(call?.attributes['idempotency.attempt']),
      ]);
    }
  });

  it('traces the store: the claims reach Redis inside the requests', () => {
    expect(checkout.some((span) => span.service === 'payments' && span.attributes['db.system.name'] === 'redis')).toBe(true);
  });
});
