import { EventEmitter } from 'node:events';
import type { Attempt } from './attempt';

/** What an attempt is tagged with when it arrives: where in the run we are. */
export interface AttemptContext {
  scenario: string;
  intent: string | undefined;
}

/**
 * Every attempt every proxy saw, in arrival order, and how many are still in flight,
 * so the runner can tell when the chain has settled without guessing from a clock alone.
 */
export class AttemptLog {
  private readonly attempts: Attempt[] = [];
  private readonly changes = new EventEmitter();
  private inFlight = 0;
  private readonly origin = performance.now();
  /** Tag given to attempts arriving from now on. */
  context: AttemptContext = { scenario: '', intent: undefined };

  /** Records an arriving attempt; finish it with {@link AttemptLog.end}. */
  begin(fields: Omit<Attempt, 'seq' | 'scenario' | 'intent' | 'status' | 'outcome' | 'startedMs' | 'endedMs'>): Attempt {
    const attempt: Attempt = {
      seq: this.attempts.length + 1,
      ...this.context,
      ...fields,
      status: null,
      outcome: 'in-flight',
      startedMs: this.now(),
      endedMs: null,
    };
    this.attempts.push(attempt);
    this.inFlight++;
    this.changes.emit('change');
    return attempt;
  }

  /** Marks an attempt finished. */
  end(attempt: Attempt, outcome: Attempt['outcome'], status: number | null): void {
    attempt.outcome = outcome;
    attempt.status = status;
    attempt.endedMs = this.now();
    this.inFlight--;
    this.changes.emit('change');
  }

  /** Calls `listener` whenever an attempt arrives or ends; returns the way to stop. */
  onChange(listener: () => void): () => void {
    this.changes.on('change', listener);
    return () => this.changes.off('change', listener);
  }

  /** Attempts of one scenario, in arrival order. */
  of(scenario: string): Attempt[] {
    return this.attempts.filter((a) => a.scenario === scenario);
  }

  /**
   * Resolves once no attempt is in flight and none arrived or ended for `quietMs`
   * (a service may still retry after a backoff: the quiet window covers that), or
   * after `timeoutMs` at the latest; resolves `false` on that timeout.
   */
  whenQuiet(quietMs: number, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      const finish = (settled: boolean) => {
        clearTimeout(quiet);
        clearTimeout(deadline);
        this.changes.off('change', restart);
        resolve(settled);
      };
      const restart = () => {
        clearTimeout(quiet);
        if (this.inFlight === 0) quiet = setTimeout(() => finish(true), quietMs);
      };
      const deadline = setTimeout(() => finish(false), timeoutMs);
      this.changes.on('change', restart);
      restart();
    });
  }

  private now(): number {
    return Math.round(performance.now() - this.origin);
  }
}
