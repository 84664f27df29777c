import type { QueuePlan } from '../broker/queue-faults';
import type { ChainConfig, ScenarioName } from '../config/schema';
import type { FaultPlan } from '../proxy/faults';
import type { Press } from '../run/caller';

/**
 * How many effects one intent may leave.
 *
 * @public
 */
export type EffectExpectation =
  /** Exactly one: the caller meant it once and was told it happened (or kept retrying until it was). */
  | 'once'
  /** Zero or one, and one if any answer said it succeeded: a caller without a key does not retry. */
  | 'at-most-once'
  /** None: the press was refused. */
  | 'none';

/** What a scenario did for one intent and what the invariants must find. */
export interface IntentRecord {
  /** The intent's id (the value of `{{intentId}}`). */
  intentId: string;
  /** The key sent for it; `undefined` when none. */
  key: string | undefined;
  effects: EffectExpectation;
  /** Presses whose answers must all be the same answer (or an explicit in-progress). */
  presses: Press[];
  /** A press after the chain settled: it must be a replay of the answer, never a 5xx. */
  laterPress?: Press;
  /** Presses under this intent's key with another body: each must be refused (422 by default). */
  refusedPresses?: Press[];
  /** Another caller's earlier presses under the same key: none of their successes may be this intent's answer. */
  otherCallers?: Press[];
  /** Effects counted just before a kill and just after the restart: the second may not be fewer. */
  aroundKill?: { before: number; after: number };
}

/** How one press differs from the config's entry. */
interface PressAs {
  /** One of the config's `entry.callers`, by index, to press as. */
  caller?: number;
  /** Another body template than the entry's. */
  body?: unknown;
  /** Another URL than the entry's. */
  url?: string;
}

/** What a scenario can do to the chain. */
export interface ScenarioContext {
  readonly config: ChainConfig;
  /** Hop names, entry side first: the last is the deepest. */
  readonly hops: readonly string[];
  /**
   * Plans faults on one hop for this scenario (hops without a plan forward untouched).
   * With `perAttemptOf`, the plan starts over at each attempt that hop receives: attempt 1
   * is then the first attempt of each call the hop above makes.
   */
  plan(hop: string, plan: FaultPlan, options?: { perAttemptOf?: string }): void;
  /** Plans faults on the queue hop's deliveries for this scenario (counted from 1). */
  planQueue(plan: QueuePlan): void;
  /** A fresh intent: a new id and a new key, unless `withKey` is false or the config's caller sends none. */
  intent(withKey?: boolean): { intentId: string; key: string | undefined };
  /**
   * Presses once; `intentId` fills the body, `key` is sent as is (none when `undefined`).
   */
  press(label: string, intentId: string, key: string | undefined, options?: PressAs): Promise<Press>;
  /** Counts an intent's effects now, as the config counts them. */
  count(intentId: string): Promise<number>;
  /** Kills a hop's service (SIGKILL) and starts it again; only for hops whose config has a `service`. */
  restart(hop: string): Promise<void>;
  /** Waits `ms` (a scenario's deliberate pause, such as the retry window), or until the run is stopped. */
  wait(ms: number): Promise<void>;
  /**
   * Waits until no proxy has seen anything for the configured quiet window, no delivery
   * is held by the queue's consumer and its queue holds no message.
   */
  settle(): Promise<void>;
}

/** One selectable scenario. */
export interface Scenario {
  /** Unique name, e.g. `lost-reply@payments`. */
  name: string;
  /** The family it belongs to; selecting the family selects every hop's instance. */
  family: ScenarioName;
  /** One sentence: what happens. */
  description: string;
  run(context: ScenarioContext): Promise<IntentRecord[]>;
}
