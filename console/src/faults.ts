import { SETUP, type Service } from '@idempotency-chain/scenarios';

/** The faults the page offers, as chosen for one press. */
export interface FaultChoice {
  /** Payments answers a first attempt late (the charge is already written). */
  slowFirstAttempt: boolean;
  /** The hops whose next reply is lost after their work is done. */
  lostReplies: Service[];
  /** Payments is killed (SIGKILL) right after writing the charge. */
  paymentsCrash: boolean;
  /** The services' idempotency store is stopped. */
  storeDown: boolean;
}

/** The write-up's faults: a slow first charge and orders' lost reply. */
export const WRITE_UP_FAULTS: FaultChoice = { slowFirstAttempt: true, lostReplies: ['orders'], paymentsCrash: false, storeDown: false };

/** JSON schema of a `FaultChoice`, for the API's validation. */
export const FAULT_CHOICE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['slowFirstAttempt', 'lostReplies', 'paymentsCrash', 'storeDown'],
  properties: {
    slowFirstAttempt: { type: 'boolean' },
    lostReplies: { type: 'array', uniqueItems: true, items: { enum: ['gateway', 'orders', 'payments'] } },
    paymentsCrash: { type: 'boolean' },
    storeDown: { type: 'boolean' },
  },
} as const;

/**
 * What `PUT /lab/faults` arms at each service for `choice`: every service
 * gets a plan, an empty one disarming what an earlier press left armed.
 * The store outage is not a fault point: the console stops the store itself.
 */
export function faultPlans(choice: FaultChoice): Record<Service, Record<string, number>> {
  // One reply lost per press, as in the write-up.
  const lost = (service: Service): Record<string, number> => (choice.lostReplies.includes(service) ? { loseReplies: 1 } : {});
  return {
    gateway: lost('gateway'),
    orders: lost('orders'),
    payments: {
      ...lost('payments'),
      ...(choice.slowFirstAttempt && { slowFirstAttemptMs: SETUP.slowFirstAttemptMs }),
      ...(choice.paymentsCrash && { crashAfterSideEffect: 1 }),
    },
  };
}
