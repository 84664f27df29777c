import type { Policy } from '@idempotency-chain/scenarios';
import type { FaultChoice } from './faults';

/** One action of the page's buttons. */
export type CheckoutRequest =
  | { mode: 'pay'; policy: Policy; faults: FaultChoice }
  | { mode: 'again'; faults: FaultChoice }
  | { mode: 'double-click'; policy: Policy; clicks: number; faults: FaultChoice };

/** An action the console cannot take now, with the HTTP status that says why. */
export class Refusal extends Error {
  override name = 'Refusal';
  constructor(
    readonly status: 409 | 503,
    message: string,
  ) {
    super(message);
  }
}

/** The presses of one action, named as the page lists their answers. */
export function labelsOf(request: CheckoutRequest): string[] {
  if (request.mode === 'pay') return ['Pay'];
  if (request.mode === 'again') return ['Press again'];
  return Array.from({ length: request.clicks }, (_, i) => `Click ${i + 1}`);
}
