import type { Socket } from 'node:net';
import type { Attempt, AttemptOutcome, Delivery } from '../proxy/attempt';
import type { AttemptLog } from '../proxy/attempt-log';
import { queueFaultLabel, type QueueFault, type QueuePlan } from './queue-faults';

/** A delivery the consumer holds: its attempt and the faults planned for it. */
export interface HeldDelivery {
  attempt: Attempt;
  faults: readonly QueueFault[];
}

/** What a queue proxy read of one delivery, to log it. */
export interface DeliveryRead {
  delivery: Delivery;
  /** The queue or subject it came from. */
  path: string;
  /** The key hash from the message's key header, `null` without one. */
  keyHash: string | null;
  /** The message's identity (a hash of its content), to tell a copy the verifier published from another message. */
  message: string;
}

/**
 * The deliveries of one queue hop, whichever broker's proxy reads them: the faults
 * planned per delivery number, the deliveries the consumer holds over all its
 * connections, the copies being published, and what went wrong on the way. A queue
 * proxy acts on what it reads as every other does; only the reading is the broker's.
 */
export class QueueDeliveries {
  private plan: QueuePlan = new Map();
  private count = 0;
  /** Deliveries the consumer holds, over all its connections: what a new one ran alongside. */
  private readonly held = new Set<Attempt>();
  /** Copies published and not yet delivered, by the message's identity: the delivery each copies. */
  private readonly copies = new Map<string, number[]>();
  /** Copies being published: the chain is not settled while one may still land. */
  publishing = 0;
  /** What went wrong in the proxy during the scenario (a copy not published, garbage read): reported as its error. */
  problems: string[] = [];

  constructor(
    private readonly hop: string,
    private readonly log: AttemptLog,
  ) {}

  /** Faults per delivery number for the scenario that starts; deliveries are counted from 1 again. */
  setPlan(plan: QueuePlan): void {
    this.plan = plan;
    this.count = 0;
    this.copies.clear();
    this.problems = [];
  }

  /** Logs a delivery as an attempt at the hop, with its number, its faults, the copy it is and what it ran alongside. */
  begin(read: DeliveryRead): HeldDelivery {
    const number = ++this.count;
    const faults = this.plan.get(number) ?? [];
    const copyOf = read.delivery.redelivered ? undefined : this.copies.get(read.message)?.shift();
    const concurrent = [...this.held].filter((a) => a.scenario === this.log.context.scenario).map((a) => a.attempt);
    const attempt = this.log.begin({
      hop: this.hop,
      attempt: number,
      ...(copyOf === undefined ? {} : { duplicateOf: copyOf }),
      ...(concurrent.length === 0 ? {} : { concurrentWith: concurrent }),
      delivery: read.delivery,
      method: 'deliver',
      path: read.path,
      keyHash: read.keyHash,
      faults: faults.map(queueFaultLabel),
    });
    this.held.add(attempt);
    return { attempt, faults };
  }

  /** Ends a held delivery once (a later end of the same one, from a closing connection, is ignored). */
  end(held: HeldDelivery, outcome: AttemptOutcome): void {
    if (!this.held.delete(held.attempt)) return;
    this.log.end(held.attempt, outcome, null);
  }

  /** Of the deliveries an ack settles, the one whose ack is to be kept from the broker (`lose-ack`, `kill-before-ack`). */
  faulted<T extends HeldDelivery>(settled: readonly T[]): T | undefined {
    return settled.find((held) => held.faults.some((f) => f.kind === 'lose-ack' || f.kind === 'kill-before-ack'));
  }

  /**
   * Keeps a faulted ack (and all the consumer writes after it) from the broker: the
   * consumer did its work, the broker never hears of it. A lost ack cuts the
   * connection now (`close`); a kill before the ack holds it while the consumer is
   * killed and started again.
   */
  withhold(held: HeldDelivery, client: Socket, close: () => void): void {
    const kill = held.faults.find((f) => f.kind === 'kill-before-ack');
    if (!kill) {
      this.end(held, 'ack-lost');
      close();
      return;
    }
    client.pause();
    // The delivery stays open through the crash and the restart: the chain is not settled meanwhile.
    void kill
      .crash()
      .catch((error: unknown) => this.problems.push(`kill before ack: ${(error as Error).message}`))
      .finally(() => {
        this.end(held, 'killed-before-ack');
        close();
      });
  }

  /** Whether a delivery's message is to be copied (`duplicate-delivery`): once when delivered, once when acked. */
  copied(held: HeldDelivery): boolean {
    return held.faults.some((f) => f.kind === 'duplicate-delivery');
  }

  /** Publishes a copy of a held delivery's message with `publish`, remembered to be told apart when it is delivered. */
  copy(held: HeldDelivery, message: string, publish: () => Promise<void>): void {
    this.copies.set(message, [...(this.copies.get(message) ?? []), held.attempt.attempt]);
    this.publishing++;
    void publish()
      .catch((error: unknown) =>
        this.problems.push(`a copy of delivery d${held.attempt.attempt} was not published: ${(error as Error).message}`),
      )
      .finally(() => this.publishing--);
  }
}
