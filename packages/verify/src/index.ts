/**
 * The verifier as a library, for a team that drives it from its own code
 * rather than the CLI: load a config, run it, write the reports. The proxy,
 * the counters and the report renderers stay internal, free to change.
 */
export { ConfigError, loadConfig, parseConfig } from './config/load';
export type { ChainConfig, ScenarioName } from './config/schema';
export type { Violation, InvariantName } from './invariants/check';
export type { Attempt, AttemptOutcome, Delivery } from './proxy/attempt';
export { writeReports } from './reports/write';
export type { IntentReport, PressReport, RunReport, ScenarioReport } from './run/report';
export type { SkippedScenario } from './scenarios/catalog';
export type { EffectExpectation } from './scenarios/scenario';
export { runChain, type RunOptions, type RunProgress } from './run/runner';
