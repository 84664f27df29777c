import { Injectable } from '@nestjs/common';
import type { HttpExecution } from './http-execution';

/** What a shutdown that could wait no longer did with the executions still unfinished (see `UnfinishedExecutions.giveUp`). */
export interface GivenUp {
  /**
   * Completed as a 500 result-not-stored: their handlers had ended, and once
   * stored their work is not run again (a completion the store fails is
   * reported as a `store_error` event of its own, and leaves the key to its lease).
   */
  completed: number;
  /** Released: their handlers had thrown, so a retry runs them as usual. */
  released: number;
}

/**
 * The HTTP executions of one `IdempotencyModule` that have not stored their
 * answer or given their key back yet. Provided by the module and shared by
 * whichever runner serves its routes (the module's own, or an app's
 * subclass provided as `IdempotencyRunner`), so a shutdown sees them all.
 */
@Injectable()
export class UnfinishedExecutions {
  private readonly executions = new Set<HttpExecution>();

  add(execution: HttpExecution): void {
    this.executions.add(execution);
  }

  delete(execution: HttpExecution): void {
    this.executions.delete(execution);
  }

  /**
   * End those whose handlers have ended but whose answers are not whole,
   * as their answer watch would (see `HttpExecution.giveUp`): for a
   * shutdown that can wait no longer.
   */
  async giveUp(): Promise<GivenUp> {
    const ends = await Promise.all([...this.executions].map((execution) => execution.giveUp()));
    return { completed: ends.filter((end) => end === 'completed').length, released: ends.filter((end) => end === 'released').length };
  }
}
