import { Observable } from 'rxjs';
import { runInExecution } from '../../current-execution';
import type { Execution } from '../../execution';

/** How a handler's stream of values ended, for its execution to be completed or released. */
export interface StreamEnd {
  /** Every value it emitted, or `undefined` once they outgrew `maxBytes` and went to the caller as they came. */
  values: unknown[] | undefined;
  /** The last value it emitted: `isFinal` decides on it. */
  last: unknown;
}

/** What `heldStream` does at each end of the handler's stream. */
export interface StreamEnding {
  /** The stream completed: end the execution (complete or release), and throw what the caller must get instead, if anything. */
  completed(end: StreamEnd): Promise<void>;
  /** The stream failed: end the execution, and throw what the caller gets (the error itself, or one in its place). */
  failed(error: unknown): Promise<never>;
  /** The caller went away (cancelled, or its deadline passed) before the stream ended: the stream was unsubscribed. */
  abandoned(): void;
}

/** What bounds a handler's stream of values: its stored size, and its caller. */
export interface StreamBounds {
  /** The stored JSON its values are held to. */
  maxBytes: number;
  /**
   * Calls `listener` once the caller went away (a gRPC call cancelled, or
   * past its deadline), at once if it already has; without it, only the
   * caller's unsubscribing tells.
   */
  whenGone?(listener: () => void): void;
}

/**
 * A handler's stream of values (a gRPC server-streaming method), held while
 * it runs so the whole stream can be stored and sent once its execution
 * ended, with two bounds. Its values are counted as they come, as the JSON
 * the record would store; past `maxBytes` they are no longer held: the
 * values held so far, then each one as it comes, go to the caller, and the
 * stream is not stored (see `StreamEnding.completed`). And the handler's
 * stream lives only as long as its caller: unsubscribed (Nest does so when a
 * gRPC call is cancelled or its deadline passes), it is unsubscribed too,
 * and `abandoned` ends the execution. The handler's stream is subscribed
 * once, inside its execution, when the caller subscribes; a caller gone
 * before that (Nest then never subscribes) ends the execution as well.
 */
export function heldStream(
  source: Observable<unknown>,
  execution: Execution,
  { maxBytes, whenGone }: StreamBounds,
  ending: StreamEnding,
): Observable<unknown> {
  let ended = false;
  let subscribed = false;
  whenGone?.(() => {
    if (subscribed || ended) return; // once subscribed, the caller's unsubscribing ends it
    ended = true;
    ending.abandoned();
  });
  return new Observable<unknown>((subscriber) => {
    if (subscribed || ended) return void subscriber.complete(); // the handler's stream runs once, for its caller
    subscribed = true;
    let held: unknown[] | undefined = [];
    let bytes = EMPTY_RECORD_BYTES;
    let last: unknown;
    const end = (settle: Promise<void>) => {
      ended = true;
      settle.then(
        () => {
          held?.forEach((value) => subscriber.next(value));
          subscriber.complete();
        },
        (error: unknown) => subscriber.error(error),
      );
    };
    const subscription = runInExecution(execution, () =>
      source.subscribe({
        next(value) {
          last = value;
          if (!held) return subscriber.next(value);
          // A value past the first adds its comma: the count is the record's bytes exactly, as `encodeResult` measures them.
          bytes += encodedBytes(value) + (held.length > 0 ? 1 : 0);
          if (bytes <= maxBytes) return void held.push(value);
          // Past the bound: no longer held, the caller gets the stream as it comes.
          const sent = held;
          held = undefined;
          sent.forEach((value) => subscriber.next(value));
          subscriber.next(value);
        },
        error(error: unknown) {
          held = undefined; // a partial stream is never sent as if whole
          end(ending.failed(error));
        },
        complete() {
          end(ending.completed({ values: held, last }));
        },
      }),
    );
    return () => {
      subscription.unsubscribe();
      if (ended) return;
      ended = true;
      held = undefined;
      ending.abandoned();
    };
  });
}

/** `{"values":[]}`: what a record of no values takes. */
const EMPTY_RECORD_BYTES = Buffer.byteLength(JSON.stringify({ values: [] }));

/** A value's bytes in the stored record; one JSON cannot hold counts nothing here, the record stores it as unstorable. */
function encodedBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value ?? null));
  } catch {
    return 0;
  }
}
