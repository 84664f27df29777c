import { ALL_SCENARIOS, type ChainConfig, type ScenarioName } from '../config/schema';
import type { Fault } from '../proxy/faults';
import { faultedPress, holdMs } from './faulted';
import { kill } from './kill';
import { doubleClick, keyReuse, latePress, noKey, twoCallers } from './presses';
import { queueScenarios } from './queue';
import { missingFor } from './requirements';
import type { IntentRecord, Scenario, ScenarioContext } from './scenario';

/**
 * A scenario left to the default catalog that this config cannot run, and why.
 *
 * @public
 */
export interface SkippedScenario {
  /** Its name; one per family, since a family that cannot run cannot run at any hop. */
  name: string;
  family: ScenarioName;
  /** What the config lacks, naming the field to set. */
  reason: string;
}

/** Every scenario the config selects and can run, in the order they run. */
export function catalog(config: ChainConfig): Scenario[] {
  const hops = config.hops.map((h) => h.name);
  const deepest = hops[hops.length - 1] as string;
  const above = hops[hops.length - 2] ?? deepest;
  const all: Scenario[] = [
    {
      name: 'write-up',
      family: 'write-up',
      description:
        above === deepest
          ? `${deepest} answers its first attempt only after its caller's timeout, and that answer is lost; every layer retries.`
          : `${deepest} answers the first attempt of each call only after its caller's timeout, and the first reply of ${above} is lost; every layer retries.`,
      run: (c) => writeUp(c, deepest, above),
    },
    ...hops.map<Scenario>((hop) => ({
      name: `lost-reply@${hop}`,
      family: 'lost-reply',
      description: `${hop} does the work, its reply to the first attempt is lost.`,
      run: (c) => faultedPress(c, { [hop]: [{ kind: 'lose-reply' }] }),
    })),
    {
      name: 'later-press',
      family: 'later-press',
      description: 'One press, no fault; once the chain settled the same key is pressed again and must replay.',
      run: (c) => faultedPress(c, {}),
    },
    {
      name: 'late-press',
      family: 'late-press',
      description: `One press, no fault; ${config.retention.minimumMs}ms after it settled (retention.minimumMs) the same key is pressed again and must still replay.`,
      run: latePress,
    },
    {
      name: 'double-click',
      family: 'double-click',
      description: `${config.doubleClick.presses} presses at once with one key.`,
      run: doubleClick,
    },
    ...hops.map<Scenario>((hop) => ({
      name: `duplicate@${hop}`,
      family: 'duplicate',
      description: `The first attempt at ${hop} is delivered twice: the copy reaches ${hop} while the original is still there.`,
      run: (c) => faultedPress(c, { [hop]: [{ kind: 'duplicate', copies: 1 }] }),
    })),
    // A caller that sends no key never retries: at the entry hop nothing would release the hold.
    ...hops
      .filter((_, index) => index > 0 || config.entry.key.send)
      .map<Scenario>((hop) => ({
        name: `retry-while-running@${hop}`,
        family: 'retry-while-running',
        description: `The first attempt at ${hop} is held until its caller retries; then both reach ${hop}, the retry while the first still runs.`,
        run: (c) => faultedPress(c, { [hop]: [{ kind: 'hold-for-retry', maxMs: c.config.settle.timeoutMs }] }),
      })),
    {
      name: 'key-reuse',
      family: 'key-reuse',
      description:
        'A settled key is sent again with one field of its body (or query) changed, each in turn: each must be refused and change nothing.',
      run: keyReuse,
    },
    {
      name: 'no-key',
      family: 'no-key',
      description: `A press without a key, sent once; the reply at ${deepest} is lost so the inner layers retry.`,
      run: (c) => noKey(c, deepest),
    },
    ...hops.map<Scenario>((hop) => ({
      name: `reset@${hop}`,
      family: 'reset',
      description: `The first attempt at ${hop} is reset mid-request, before ${hop} sees it.`,
      run: (c) => faultedPress(c, { [hop]: [{ kind: 'reset' }] }),
    })),
    ...hops.map<Scenario>((hop) => ({
      name: `unavailable@${hop}`,
      family: 'unavailable',
      description: `The first attempt at ${hop} is answered 503 by its proxy, never forwarded; the chain must still succeed once.`,
      run: (c) => faultedPress(c, { [hop]: [{ kind: 'unavailable' }] }),
    })),
    {
      name: 'kill',
      family: 'kill',
      description: `${deepest} is killed after its effect and before its answer, started again, and the chain retries; the effect must survive the crash.`,
      run: (c) => kill(c, deepest),
    },
    {
      name: 'two-callers',
      family: 'two-callers',
      description: 'Two callers send the same key, each with its own body: each must get its own effect and answer.',
      run: twoCallers,
    },
    ...queueScenarios(config),
  ];
  return all.filter((s) => selected(config).includes(s.family) && missingFor(s.family, config) === undefined);
}

/** The families of the config's selection that it cannot run, each with what it lacks. */
export function skipped(config: ChainConfig): SkippedScenario[] {
  return selected(config).flatMap((family) => {
    const reason = missingFor(family, config);
    return reason === undefined ? [] : [{ name: family, family, reason }];
  });
}

function selected(config: ChainConfig): readonly ScenarioName[] {
  return config.scenarios ?? ALL_SCENARIOS;
}

/**
 * The write-up, pressed once: the deepest service does the work at once but answers
 * the first attempt of each call late (its caller gives up and retries), and the first
 * reply of the hop above it is lost after its work is done (so the layer above retries
 * too). Each of the hop above's attempts is a call of its own, as in the write-up's
 * table: 2 attempts above x 2 attempts below reach the deepest service. The effects
 * counted are this one press's; a later press is the `later-press` scenario's question.
 */
async function writeUp(context: ScenarioContext, deepest: string, above: string): Promise<IntentRecord[]> {
  const slow: Fault = { kind: 'latency', ms: holdMs(context, deepest) };
  if (above === deepest) {
    context.plan(deepest, new Map([[1, [slow, { kind: 'lose-reply' }]]]));
  } else {
    context.plan(deepest, new Map([[1, [slow]]]), { perAttemptOf: above });
    context.plan(above, new Map([[1, [{ kind: 'lose-reply' }]]]));
  }
  const { intentId, key } = context.intent();
  const press = await context.press('press', intentId, key);
  return [{ intentId, key, effects: key === undefined ? 'at-most-once' : 'once', presses: [press] }];
}

/**
 * Narrows a catalog to the names asked for on the command line: a family name
 * (`lost-reply`) or one instance (`lost-reply@orders`). A name the config cannot
 * run throws with what it lacks, an unknown one with the names known.
 */
export function select(scenarios: Scenario[], names: readonly string[], cannotRun: readonly SkippedScenario[] = []): Scenario[] {
  if (names.length === 0) return scenarios;
  for (const name of names) {
    if (scenarios.some((s) => s.name === name || s.family === name)) continue;
    const skip = cannotRun.find((s) => s.name === name);
    if (skip) throw new Error(`scenario "${name}" cannot run: ${skip.reason}`);
    throw new Error(`unknown or disabled scenario "${name}"; known: ${scenarios.map((s) => s.name).join(', ')}`);
  }
  return scenarios.filter((s) => names.includes(s.name) || names.includes(s.family));
}
