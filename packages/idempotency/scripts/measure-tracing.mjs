// What TracingObserver costs a request when no OpenTelemetry SDK is
// registered (the default): time per `record()` call and garbage collections
// during many calls, next to an observer that does nothing and one that
// allocates a copy of the event (the control: it shows the count would see
// an allocation). Not part of `npm test`: `npm run measure:tracing -w
// @idempotency-chain/idempotency` (it builds first). Env: CALLS (5,000,000).
import { PerformanceObserver } from 'node:perf_hooks';
import { IdempotencyOutcome } from '../dist/index.js';
import { TracingObserver } from '../dist/opentelemetry/index.js';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const calls = Number(process.env.CALLS ?? 5_000_000);
// The event the coordinator already builds for its other observers (metrics, logs).
const event = {
  outcome: IdempotencyOutcome.Executed,
  service: 'payments',
  operation: 'payments.charge',
  keyHash: '0bafe22156d2',
  epoch: 7,
};
let sink;
const observers = {
  'does nothing': { record: () => undefined },
  TracingObserver: new TracingObserver(),
  'copies the event (control)': { record: (e) => (sink = { ...e }) },
};

let collections = 0;
new PerformanceObserver((list) => (collections += list.getEntries().length)).observe({ entryTypes: ['gc'] });
const settle = () => new Promise((resolve) => setImmediate(resolve)); // gc entries are delivered asynchronously

for (const [name, observer] of Object.entries(observers)) {
  for (let i = 0; i < 100_000; i += 1) observer.record(event); // warm up: optimised before measured
  globalThis.gc();
  await settle();
  collections = 0;
  const heapBefore = process.memoryUsage().heapUsed;
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i += 1) observer.record(event);
  const ns = Number(process.hrtime.bigint() - started) / calls;
  const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
  await settle();
  console.log(
    `${name.padEnd(28)} ${ns.toFixed(1).padStart(6)} ns/call  ${String(collections).padStart(4)} GCs in ${calls} calls  heap +${(heapGrowth / 1024).toFixed(0)} KiB`,
  );
}
void sink;
