import { randomUUID } from 'node:crypto';
import { Controller, createParamDecorator, type ExecutionContext, type INestMicroservice } from '@nestjs/common';
import { GrpcMethod, Payload } from '@nestjs/microservices';
import { Metadata, status, type Client, type ClientReadableStream, type ServerWritableStream, type ServiceError } from '@grpc/grpc-js';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { interval, map, Observable, range } from 'rxjs';
import { eventually, latch, within, type Latch } from '../support/async';
import { Recorder } from '../support/recorder';
import { chargeStreamsClient, grpcConsumer, type Reply } from './support/grpc-streams';

/** Small, so a few dozen replies outgrow it. */
const MAX_RESPONSE_BYTES = 1024;
/** Replies of the long stream: about 60 KB of stored JSON, far past `MAX_RESPONSE_BYTES`. */
const LONG_STREAM = 2000;
/** A generous bound on each wait: it guards against a hang, it measures nothing. */
const WAIT_MS = 15_000;

/** What one kind of stream (by the request's `amountCents`) went through: its runs, and when each run was subscribed and torn down. */
class StreamLog {
  runs = 0;
  subscriptions = 0;
  private readonly latches = new Map<string, Latch>();

  /** The latch of `event` in run `run` (1 for the first), opened once it happened. */
  latch(event: 'called' | 'subscribed' | 'finalized', run: number): Latch {
    const name = `${event}:${run}`;
    if (!this.latches.has(name)) this.latches.set(name, latch());
    return this.latches.get(name)!;
  }
}

const SHORT = 3;
const LONG = 5;
const SILENT_WATCH = 7;
const LOUD_WATCH = 9;
const LATE = 11;
const logs = new Map([SHORT, LONG, SILENT_WATCH, LOUD_WATCH, LATE].map((amount) => [amount, new StreamLog()]));
const logOf = (amountCents: number) => logs.get(amountCents)!;

/** The stream `amountCents` names, its subscription and teardown logged. */
function stream(amountCents: number): Observable<Reply> {
  const log = logOf(amountCents);
  const charge = (log.runs += 1);
  const replies: Observable<Reply> =
    amountCents === SHORT || amountCents === LONG
      ? range(0, amountCents === SHORT ? 3 : LONG_STREAM).pipe(map((i) => ({ charge, amountCents: i })))
      : amountCents === SILENT_WATCH || amountCents === LATE
        ? new Observable<Reply>() // a watch with nothing to say yet: never emits, never completes
        : interval(5).pipe(map((i) => ({ charge, amountCents: i }))); // a watch that never completes, soon past the bound
  return new Observable<Reply>((subscriber) => {
    const subscription = replies.subscribe(subscriber);
    log.subscriptions += 1;
    log.latch('subscribed', charge).open();
    return () => {
      subscription.unsubscribe();
      log.latch('finalized', charge).open();
    };
  });
}

/** The gRPC call a handler runs for: Nest passes it third, after the request and its metadata. */
const GrpcCall = createParamDecorator((_data: unknown, context: ExecutionContext) => context.getArgByIndex(2));

@Controller()
class ReceiptsService {
  @GrpcMethod('ChargeStreams', 'Receipts')
  @Idempotent('grpc.receipts')
  async receipts(@Payload() body: { amountCents: number }, @GrpcCall() call: ServerWritableStream<unknown, Reply>) {
    if (body.amountCents === LATE) {
      // Returns its stream only once its caller has gone: Nest then never subscribes to it.
      logOf(LATE)
        .latch('called', logOf(LATE).runs + 1)
        .open();
      await new Promise((resolve) => call.once('cancelled', resolve));
    }
    return stream(body.amountCents);
  }
}

/** How a call ended: every reply, or its error's code, the replies before it and the problem type it carries. */
type Ended = { replies: Reply[] } | { code: number; replies: Reply[]; problemType: string | undefined };

describe('@Idempotent bounds a gRPC server stream (@grpc/grpc-js over loopback)', () => {
  let microservice: INestMicroservice;
  let client: Client & { Receipts: (request: object, metadata: Metadata, options?: object) => ClientReadableStream<Reply> };
  let recorder: Recorder;

  /** One call with `key`; `handled` may act on the call once it is made (cancel it, once the handler runs). */
  function call(
    key: string,
    amountCents: number,
    options: { deadlineMs?: number; handled?: (call: ClientReadableStream<Reply>) => void } = {},
  ) {
    return new Promise<Ended>((resolve) => {
      const metadata = new Metadata();
      metadata.set('idempotency-key', key);
      const receipts = client.Receipts({ amountCents }, metadata, { deadline: Date.now() + (options.deadlineMs ?? WAIT_MS) });
      const replies: Reply[] = [];
      receipts.on('data', (reply: Reply) => replies.push(reply));
      receipts.on('error', (error: ServiceError) =>
        resolve({ code: error.code, replies, problemType: error.metadata?.get('idempotency-problem-type')[0]?.toString() }),
      );
      receipts.on('end', () => resolve({ replies }));
      options.handled?.(receipts);
    });
  }

  beforeAll(async () => {
    const consumer = await grpcConsumer(ReceiptsService, { maxResponseBytes: MAX_RESPONSE_BYTES });
    microservice = consumer.microservice;
    await microservice.listen();
    recorder = microservice.get(Recorder);
    client = chargeStreamsClient(consumer.url);
  });
  afterAll(async () => {
    client?.close();
    await microservice?.close();
  });

  it('stores and replays a stream within maxResponseBytes', async () => {
    const key = `short-${randomUUID()}`;
    const first = await call(key, SHORT);
    const retry = await call(key, SHORT);

    const charge = logOf(SHORT).runs;
    expect(first).toEqual({ replies: [0, 1, 2].map((amountCents) => ({ charge, amountCents })) });
    expect(retry).toEqual(first);
  });

  it('sends a stream past maxResponseBytes whole to its caller, and stores a result-not-stored in its place', async () => {
    const key = `long-${randomUUID()}`;
    const unstorable = recorder.count('unstorable');

    const first = await call(key, LONG);
    const retry = await call(key, LONG);

    const charge = logOf(LONG).runs;
    expect(first).toEqual({ replies: Array.from({ length: LONG_STREAM }, (_, amountCents) => ({ charge, amountCents })) });
    // The retry neither runs the handler again nor replays a stream that was never stored.
    expect(retry).toEqual({ code: status.INTERNAL, replies: [], problemType: 'urn:idempotency-chain:problem:result-not-stored' });
    expect(logOf(LONG).runs).toBe(charge);
    expect(recorder.count('unstorable')).toBe(unstorable + 1);
    // No longer held past the bound, the stream has no size to tell: the reason names the option to raise.
    const reason = recorder.events.findLast((event) => event.outcome === 'unstorable')?.error;
    expect(reason).toEqual(
      new Error(`the stream of values is larger than maxResponseBytes (${MAX_RESPONSE_BYTES.toLocaleString('en-US')})`),
    );
  });

  it('stops a stream that never completes once its caller cancels, and releases the key for a retry', async () => {
    const key = `silent-${randomUUID()}`;
    const log = logOf(SILENT_WATCH);
    const released = recorder.count('released');

    const run = log.runs + 1;
    const cancelled = await call(key, SILENT_WATCH, {
      handled: (receipts) => void log.latch('subscribed', run).promise.then(() => receipts.cancel()),
    });
    expect(cancelled).toEqual({ code: status.CANCELLED, replies: [], problemType: undefined });
    await within(log.latch('finalized', run).promise, WAIT_MS, "the handler's stream torn down");
    await eventually(() => recorder.count('released') > released, 'the key released', { timeoutMs: WAIT_MS });

    // Released: the retry runs the handler again, rather than being refused while a stream nobody reads holds the key.
    const retry = await call(key, SILENT_WATCH, {
      handled: (receipts) => void log.latch('subscribed', run + 1).promise.then(() => receipts.cancel()),
    });
    expect(retry).toEqual({ code: status.CANCELLED, replies: [], problemType: undefined });
    await within(log.latch('finalized', run + 1).promise, WAIT_MS, "the retry's stream torn down");
    expect(log.runs).toBe(run + 1);
    await eventually(() => recorder.count('released') > released + 1, "the retry's key released", { timeoutMs: WAIT_MS });
  });

  it('sends a never-completing stream past maxResponseBytes as it comes, and stops it at the deadline', async () => {
    const key = `loud-${randomUUID()}`;
    const log = logOf(LOUD_WATCH);
    const released = recorder.count('released');
    const deadlineMs = 3000;

    const run = log.runs + 1;
    const ended = await call(key, LOUD_WATCH, { deadlineMs });
    expect(ended).toMatchObject({ code: status.DEADLINE_EXCEEDED, problemType: undefined });
    // Past the bound, replies reach the caller before the stream ends: more than the bound could hold.
    const replies = ended.replies;
    const bytes = Buffer.byteLength(JSON.stringify({ values: replies }));
    expect(bytes).toBeGreaterThan(MAX_RESPONSE_BYTES);
    expect(replies).toEqual(replies.map((_, amountCents) => ({ charge: run, amountCents })));
    await within(log.latch('finalized', run).promise, WAIT_MS, "the handler's stream torn down");
    await eventually(() => recorder.count('released') > released, 'the key released', { timeoutMs: WAIT_MS });
  });

  it('releases the key of a stream whose caller went away before the handler returned it', async () => {
    const key = `late-${randomUUID()}`;
    const log = logOf(LATE);
    const released = recorder.count('released');
    const run = log.runs + 1;

    const cancelled = await call(key, LATE, { handled: (receipts) => void log.latch('called', run).promise.then(() => receipts.cancel()) });
    expect(cancelled).toEqual({ code: status.CANCELLED, replies: [], problemType: undefined });
    await eventually(() => recorder.count('released') > released, 'the key released', { timeoutMs: WAIT_MS });
    // Nest never subscribed to the stream the handler returned after its caller left.
    expect(log.runs).toBe(run);
    expect(log.subscriptions).toBe(0);
  });
});
