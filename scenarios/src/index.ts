/**
 * What other workspaces reuse from the runner (the lab console): the lab's
 * processes and their timeline, the sequence diagram's steps, the store, and
 * the write-up itself. The runner's own entry is `main.ts`.
 */
export { Lab, SERVICES, type LabSettings, type Service } from './lab-processes';
export type { LabEvent } from './timeline';
export { PARTICIPANTS, sequenceSteps, type Participant, type SequenceStep } from './diagram';
export { chooseStore, type StoreChoice } from './store-choice';
export { pings, PrivateRedis, privateRedisUnavailable } from '@idempotency-chain/local-processes';
export { POLICIES, SETUP, budgets, callerFor, press, runWriteUp, type Policy, type PolicyRun, type PressAnswer } from './write-up';
export { EXPECTED_CHARGES, callerText, laterText } from './report';
export { ledgerOf, newOrder } from './failures/support';
export { allStores } from './failures/store-outage';
export type { LedgerLine } from './scenario';
