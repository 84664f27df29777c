import type { Execution, IdempotencyStore } from '@idempotency-chain/idempotency';
import { inspectRecord } from '@idempotency-chain/idempotency/operator';

/** Small, so an answer of 2 KB outgrows it. */
export const MAX_RESPONSE_BYTES = 1024;

/** Answers past the bound, by the bytes of the one whose record fits it exactly: far past, and by one byte. */
export const pastTheBound = (fits: number): Array<[string, number]> => [
  ['2,000 bytes', 2000],
  ['one byte past the bound', fits + 1],
];

/** A JSON object, `{"memo":"xx…"}`, of exactly `bytes` UTF-8 bytes. */
export const memo = (bytes: number) => ({ memo: 'x'.repeat(bytes - Buffer.byteLength('{"memo":""}')) });

/**
 * The reason a record gives for not storing a result (`what`: `result`,
 * `error`) past `MAX_RESPONSE_BYTES`: the size of the JSON it would have
 * stored, and the option that bounds it.
 */
export const notStored = (what: string, storedJson: object) => ({
  unstorable: `the ${what} is ${Buffer.byteLength(JSON.stringify(storedJson)).toLocaleString('en-US')} bytes, larger than maxResponseBytes (${MAX_RESPONSE_BYTES.toLocaleString('en-US')})`,
});

/** How many times a handler ran for each tag (the test's key), and the record key it ran under. */
export class HandlerRuns {
  private readonly counts = new Map<string, number>();
  private readonly recordKeys = new Map<string, string>();

  ran(tag: string, execution: Execution): void {
    this.counts.set(tag, this.count(tag) + 1);
    this.recordKeys.set(tag, execution.recordKey);
  }

  count(tag: string): number {
    return this.counts.get(tag) ?? 0;
  }

  /** The record `tag`'s handler ran under, through the operator API, with its stored answer. */
  record(store: IdempotencyStore, tag: string) {
    const recordKey = this.recordKeys.get(tag);
    if (recordKey === undefined) throw new Error(`no handler ran for ${tag}`);
    return inspectRecord(store, { recordKey }, { body: true });
  }
}
