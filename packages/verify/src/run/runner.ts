import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { QueueFault } from '../broker/queue-faults';
import { queueProxyFor, queueSource, type QueueProxy } from '../broker/queue-proxy';
import type { ChainConfig, HopConfig, ScenarioName } from '../config/schema';
import { countEffects } from '../effects/count';
import { checkIntent, type Violation } from '../invariants/check';
import { keyHash } from '../proxy/attempt';
import { AttemptLog } from '../proxy/attempt-log';
import { FaultProxy } from '../proxy/fault-proxy';
import type { Fault } from '../proxy/faults';
import { catalog, select, skipped } from '../scenarios/catalog';
import type { IntentRecord, Scenario, ScenarioContext } from '../scenarios/scenario';
import { Caller } from './caller';
import { Deadline } from './deadline';
import { unexercised } from './exercised';
import { queueUnexercised, queueViolations } from './queue-checks';
import { ServiceProcess } from './service';
import { pressReport, type IntentReport, type RunReport, type ScenarioReport } from './report';

/**
 * Told as a run goes, so a terminal can show progress.
 *
 * @public
 */
export interface RunProgress {
  /** A scenario begins: its name, its family and what it does (`index` from 0 of `total`). */
  scenarioStarted?(
    scenario: { readonly name: string; readonly family: ScenarioName; readonly description: string },
    index: number,
    total: number,
  ): void;
  /** A scenario ended, with its report. */
  scenarioFinished?(report: ScenarioReport, index: number, total: number): void;
}

/**
 * What to run.
 *
 * @public
 */
export interface RunOptions {
  /** The config file's name, for the report. */
  configFile: string;
  /** Scenario or family names; all the config enables when empty. */
  scenarios?: readonly string[];
  /** Told as each scenario starts and ends (the CLI prints a line for each). */
  progress?: RunProgress;
  /**
   * Stops the run when aborted (the CLI aborts it on SIGINT and SIGTERM): the services
   * and proxies are stopped and the run rejects, its message starting with the reason's.
   */
  signal?: AbortSignal;
  /**
   * Where the output of the services the verifier starts goes, one `<hop>.log` each (the
   * CLI uses `<report-dir>/services`), so it does not interleave with the verdict.
   * Without one a service's stderr goes to the verifier's.
   */
  serviceLogDir?: string;
}

/**
 * Verifies a chain: starts one fault proxy per hop, runs each selected scenario
 * against the entry, counts each intent's effects once the chain settled and checks
 * the invariants. Services with a `service` entry are started (deepest first) and
 * stopped by the verifier; the others must already be running.
 *
 * @example
 * ```ts
 * import { loadConfig, runChain } from '@idempotency-chain/verify';
 *
 * const report = await runChain(loadConfig('chain.yaml'), {
 *   configFile: 'chain.yaml',
 *   progress: { scenarioFinished: (scenario) => console.log(scenario.name, scenario.passed ? 'passed' : 'failed') },
 * });
 * for (const v of report.scenarios.flatMap((s) => s.violations)) console.log(v.invariant, v.intentId, v.message);
 * ```
 *
 * @public
 */
export async function runChain(config: ChainConfig, options: RunOptions): Promise<RunReport> {
  const names = options.scenarios ?? [];
  const cannotRun = skipped(config);
  const scenarios = select(catalog(config), names, cannotRun);
  // A run that tested nothing must never read as a pass: it is a setup error.
  if (scenarios.length === 0) {
    throw new Error(`no scenario can run with this config: ${cannotRun.map((s) => `${s.name}: ${s.reason}`).join('; ')}`);
  }
  const started = Date.now();
  const log = new AttemptLog();
  /** Per hop, the hops whose plans start over at each of its attempts (`perAttemptOf`). */
  const restartOn = new Map<string, Set<string>>();
  const proxies: Map<string, FaultProxy> = new Map(
    config.hops.map((hop) => [
      hop.name,
      proxyFor(hop, config, log, () => restartOn.get(hop.name)?.forEach((below) => proxies.get(below)?.restartPlan())),
    ]),
  );
  const queue = config.queue ? queueProxyFor(config.queue, log) : undefined;
  const services = new Map(
    // The queue's consumer is the deepest service: last here, started first.
    [...config.hops, ...(config.queue ? [config.queue] : [])].flatMap((hop) => {
      if (!hop.service) return [];
      const logFile = options.serviceLogDir === undefined ? undefined : join(options.serviceLogDir, `${hop.name}.log`);
      return [[hop.name, new ServiceProcess(hop.name, hop.service, logFile)] as const];
    }),
  );
  const caller = new Caller(config.entry);
  const reports: ScenarioReport[] = [];
  const deadline = new Deadline(config.deadlineMs, options.signal);
  let closing: PromiseRejectedResult | undefined;
  try {
    await deadline.race(async () => {
      await Promise.all([...proxies.values(), ...(queue ? [queue] : [])].map((p) => p.start()));
      // Deepest first: a service may check its downstream when it starts.
      for (const service of [...services.values()].reverse()) await service.start();
      for (const [index, scenario] of scenarios.entries()) {
        deadline.doing = `in scenario ${scenario.name}; ${index} of ${scenarios.length} scenarios finished`;
        options.progress?.scenarioStarted?.(scenario, index, scenarios.length);
        restartOn.clear();
        const report = await runScenario(scenario, {
          config,
          log,
          proxies,
          queue,
          restartOn,
          services,
          caller,
          signal: deadline.signal,
        });
        reports.push(report);
        options.progress?.scenarioFinished?.(report, index, scenarios.length);
      }
    });
  } finally {
    closing = await closeAll(services, [...proxies.values(), ...(queue ? [queue] : [])], caller);
  }
  // Reached only when the run itself did not throw: its own failure is the one to report.
  if (closing) throw closing.reason;
  return {
    config: options.configFile,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    passed: reports.every((r) => r.passed),
    hops: [...config.hops.map((h) => h.name), ...(config.queue ? [config.queue.name] : [])],
    scenarios: reports,
    // Named on the command line, a scenario that cannot run threw above: only the default catalog's are listed.
    skipped: names.length === 0 ? cannotRun : [],
  };
}

/**
 * Stops every service, proxy and connection, whatever fails on the way, and returns the
 * first failure: a listening proxy left behind would keep the CLI from ever exiting, and
 * a service left running would hold its port for the next run.
 */
async function closeAll(
  services: Map<string, ServiceProcess>,
  proxies: readonly { stop(): Promise<void> }[],
  caller: Caller,
): Promise<PromiseRejectedResult | undefined> {
  const closed = [
    ...(await Promise.allSettled([...services.values()].map((s) => s.stop()))),
    ...(await Promise.allSettled(proxies.map((p) => p.stop()))),
    ...(await Promise.allSettled([caller.close()])),
  ];
  return closed.find((c): c is PromiseRejectedResult => c.status === 'rejected');
}

interface Chain {
  config: ChainConfig;
  log: AttemptLog;
  proxies: Map<string, FaultProxy>;
  /** The queue hop's proxy, when the config has a queue. */
  queue: QueueProxy | undefined;
  restartOn: Map<string, Set<string>>;
  services: Map<string, ServiceProcess>;
  caller: Caller;
  /** Aborted at the run's deadline: a scenario left behind presses and counts nothing more. */
  signal: AbortSignal;
}

async function runScenario(scenario: Scenario, chain: Chain): Promise<ScenarioReport> {
  const started = performance.now();
  // A restart runs inside a proxy, which can only end the attempt: its failure is kept for the scenario.
  const restartFailures: unknown[] = [];
  const planned = new Map<string, Fault[]>();
  const plannedQueue: QueueFault[] = [];
  const context = contextFor(scenario, chain, restartFailures, planned, plannedQueue);
  for (const proxy of chain.proxies.values()) proxy.setPlan(new Map());
  chain.queue?.setPlan(new Map());
  const intents: IntentReport[] = [];
  const violations: Violation[] = [];
  let error: string | undefined;
  try {
    const records = await scenario.run(context);
    if (restartFailures.length > 0) throw restartFailures[0];
    await context.settle();
    if (chain.queue && chain.queue.problems.length > 0) throw new Error(chain.queue.problems.join('; '));
    for (const record of records) {
      chain.signal.throwIfAborted();
      const effects = await countEffects(chain.config.effect, record.intentId, chain.config.settle.timeoutMs);
      intents.push(intentReport(record, effects));
      violations.push(...checkIntent(record, effects, { refusedStatuses: chain.config.keyReuse.refusedWith }));
    }
  } catch (failure) {
    error = failure instanceof Error ? failure.message : String(failure);
  }
  const attempts = chain.log.of(scenario.name);
  const queueHop = chain.config.queue;
  if (queueHop && error === undefined) violations.push(...queueViolations(queueHop, attempts, chain.queue?.dropped ?? []));
  const notExercised = [
    ...unexercised(planned, attempts, chain.config),
    ...(queueHop ? queueUnexercised(queueHop, plannedQueue, attempts) : []),
  ];
  return {
    name: scenario.name,
    description: scenario.description,
    passed: error === undefined && violations.length === 0 && notExercised.length === 0,
    durationMs: Math.round(performance.now() - started),
    intents,
    violations,
    attempts,
    ...(error === undefined ? {} : { error }),
    ...(notExercised.length === 0 ? {} : { notExercised }),
  };
}

function contextFor(
  scenario: Scenario,
  { config, log, proxies, queue, restartOn, services, caller, signal }: Chain,
  restartFailures: unknown[],
  planned: Map<string, Fault[]>,
  plannedQueue: QueueFault[],
): ScenarioContext {
  log.context = { scenario: scenario.name, intent: undefined };
  return {
    config,
    hops: config.hops.map((h) => h.name),
    plan: (hop, plan, options) => {
      proxies.get(hop)?.setPlan(plan);
      planned.set(hop, [...plan.values()].flat());
      for (const below of restartOn.values()) below.delete(hop);
      if (options?.perAttemptOf !== undefined) {
        restartOn.set(options.perAttemptOf, (restartOn.get(options.perAttemptOf) ?? new Set()).add(hop));
      }
    },
    planQueue: (plan) => {
      queue?.setPlan(plan);
      plannedQueue.splice(0, plannedQueue.length, ...[...plan.values()].flat());
    },
    intent: (withKey = true) => ({
      // Short, URL- and SQL-safe, and recognisable in a team's own logs.
      intentId: `vfy-${randomBytes(6).toString('hex')}`,
      key: withKey && config.entry.key.send ? randomUUID() : undefined,
    }),
    press: (label, intentId, key, as = {}) => {
      signal.throwIfAborted();
      log.context = { scenario: scenario.name, intent: intentId };
      const other = as.caller === undefined ? undefined : config.entry.callers?.[as.caller];
      const body = other?.body === undefined ? as.body : mergedBody(as.body ?? config.entry.body, other.body);
      return caller.press({ label, intentId, key, headers: other?.headers, body, url: as.url, caller: (as.caller ?? 0) + 1 });
    },
    restart: async (hop) => {
      const service = services.get(hop);
      if (!service) throw new Error(`hop ${hop} has no service the verifier can restart`);
      try {
        await service.kill();
        await service.start();
      } catch (failure) {
        restartFailures.push(failure);
        throw failure;
      }
    },
    wait: (ms) => sleep(ms, undefined, { signal }),
    count: (intentId) => countEffects(config.effect, intentId, config.settle.timeoutMs),
    settle: async () => {
      const { quietMs, timeoutMs } = config.settle;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        signal.throwIfAborted();
        if (!(await log.whenQuiet(quietMs, Math.max(0, deadline - Date.now())))) {
          throw new Error(`the chain did not settle within ${timeoutMs}ms`);
        }
        const waiting = queue ? await queue.waiting() : 0;
        if (waiting === 0) return;
        // A message waits in the queue for a consumer that reconnects or restarts: the broker
        // tells no one when it is taken, so its depth is asked again after the quiet window.
        if (Date.now() >= deadline) {
          throw new Error(
            `the chain did not settle within ${timeoutMs}ms: ${waiting} message(s) still wait in ${config.queue ? queueSource(config.queue) : 'the queue'} or for the consumer's ack`,
          );
        }
      }
    },
  };
}

function intentReport(record: IntentRecord, effects: number): IntentReport {
  const presses = [...record.presses, record.laterPress, ...(record.refusedPresses ?? [])].filter((p) => p !== undefined);
  return {
    intentId: record.intentId,
    keyHash: keyHash(record.key),
    expected: record.effects,
    effects,
    presses: presses.map(pressReport),
  };
}

function proxyFor(hop: HopConfig, config: ChainConfig, log: AttemptLog, onAttempt: () => void): FaultProxy {
  const [host, port] = hop.listen.includes(':') ? hop.listen.split(':') : ['127.0.0.1', hop.listen];
  return new FaultProxy({
    name: hop.name,
    host: host as string,
    port: Number(port),
    upstream: new URL(hop.upstream).origin,
    keyHeader: config.entry.key.header,
    log,
    upstreamTimeoutMs: config.settle.timeoutMs,
    onAttempt,
  });
}

/** A caller's body over the entry's: field by field when both are objects, else the caller's whole. */
function mergedBody(base: unknown, over: unknown): unknown {
  const isObject = (value: unknown) => value !== null && typeof value === 'object' && !Array.isArray(value);
  return isObject(base) && isObject(over) ? { ...(base as object), ...(over as object) } : over;
}
