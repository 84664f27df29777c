/**
 * The lab: the chain's services run from their own modules, with fault
 * points, naive variants and the write-up's key policies applied from
 * outside. `./main` starts one service as a process; `./testing` boots one
 * in a test.
 */
export { createLabApp } from './lab-app';
export { KEY_POLICIES, loadLabConfig, NAIVE_VARIANTS } from './lab-config';
export type { LabConfig, LabKeyPolicy, NaiveVariant } from './lab-config';
export type { FaultPlan } from './faults/lab-faults';
export { CHAIN, isServiceName } from './services';
export type { ChainApp, Environment, ServiceName } from './services';
