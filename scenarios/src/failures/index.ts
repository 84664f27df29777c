import type { Scenario } from '../scenario';
import { doubleClick } from './double-click';
import { failureBeforeCommit } from './failure-before-commit';
import { keyReuse } from './key-reuse';
import { retention } from './retention';
import { retryMultiplication } from './retry-multiplication';

/** The failures the write-up does not cover, in the order RESULTS.md tells them. */
export const FAILURE_SCENARIOS: Scenario[] = [doubleClick, keyReuse, failureBeforeCommit, retention, retryMultiplication];
