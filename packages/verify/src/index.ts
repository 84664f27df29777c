export { ConfigError, loadConfig, parseConfig } from './config/load';
export {
  SCENARIO_NAMES,
  chainConfigSchema,
  type ChainConfig,
  type EffectConfig,
  type HopConfig,
  type ScenarioName,
  type ServiceConfig,
} from './config/schema';
export { countEffects } from './effects/count';
export type { Violation, InvariantName } from './invariants/check';
export type { Attempt, AttemptOutcome } from './proxy/attempt';
export { AttemptLog } from './proxy/attempt-log';
export { FaultProxy, type FaultProxyOptions } from './proxy/fault-proxy';
export type { Fault, FaultPlan } from './proxy/faults';
export { junitReport } from './reports/junit';
export { markdownReport } from './reports/markdown';
export { sequenceDiagram } from './reports/mermaid';
export { REPORT_FILES, writeReports } from './reports/write';
export type { IntentReport, PressReport, RunReport, ScenarioReport } from './run/report';
export { runChain, type RunOptions, type RunProgress } from './run/runner';
