import type { Scenario } from '../scenario';
import { crashAfterSideEffect } from './crash-after-side-effect';
import { doubleClick } from './double-click';
import { failureBeforeCommit } from './failure-before-commit';
import { fingerprintMerge } from './fingerprint-merge';
import { keyReuse } from './key-reuse';
import { leaseLost } from './lease-lost';
import { natsRedelivery } from './nats-redelivery';
import { queueRedelivery } from './queue-redelivery';
import { replicas } from './replicas';
import { retention } from './retention';
import { retryMultiplication } from './retry-multiplication';
import { storeOutage } from './store-outage';

/** The failures the write-up does not cover, in the order RESULTS.md tells them. */
export const FAILURE_SCENARIOS: Scenario[] = [
  doubleClick,
  replicas,
  keyReuse,
  failureBeforeCommit,
  crashAfterSideEffect,
  leaseLost,
  storeOutage,
  retention,
  retryMultiplication,
  queueRedelivery,
  natsRedelivery,
  fingerprintMerge,
];
