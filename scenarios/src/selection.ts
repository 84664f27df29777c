import { FAILURE_SCENARIOS } from './failures';

/** The write-up's id, beside the failure scenarios' ids. */
export const WRITE_UP = 'write-up';

/** Every id a run knows, in the order it runs them and RESULTS.md tells them. */
export const SCENARIO_IDS: readonly string[] = [WRITE_UP, ...FAILURE_SCENARIOS.map((scenario) => scenario.id)];

/** The soak's section of RESULTS.md, written by `npm run chaos` from chaos.json. */
export const CHAOS = 'chaos';

/** Every section of RESULTS.md, in order: the scenarios', then the soak's. */
export const DOCUMENT_SECTIONS: readonly string[] = [...SCENARIO_IDS, CHAOS];

/** What a run runs: every scenario, or the ones `SCENARIOS` names. */
export interface Selection {
  ids: string[];
  /** Some ids were left out: the run updates only its own sections. */
  partial: boolean;
}

/** `SCENARIOS` names an id the runner does not know. */
export class UnknownScenarioError extends Error {
  override name = 'UnknownScenarioError';

  constructor(readonly unknown: string[]) {
    super(`unknown scenario${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}; the runner knows: ${SCENARIO_IDS.join(', ')}`);
  }
}

/**
 * The selection a comma list (the value of `SCENARIOS`) asks for: everything
 * when it is unset or empty. An unknown id is an error, never a run of
 * nothing.
 */
export function selectionFrom(value: string | undefined): Selection {
  const asked = (value ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  if (asked.length === 0) return { ids: [...SCENARIO_IDS], partial: false };
  const unknown = asked.filter((id) => !SCENARIO_IDS.includes(id));
  if (unknown.length > 0) throw new UnknownScenarioError(unknown);
  const ids = SCENARIO_IDS.filter((id) => asked.includes(id));
  return { ids, partial: ids.length < SCENARIO_IDS.length };
}

/** `npm run scenarios -- --list`: every id with its title. */
export function listing(): string {
  const rows: Array<[string, string]> = [
    [WRITE_UP, 'The write-up: one checkout under none, per-attempt, propagated and fingerprint (4, 2, 1, 1 charges)'],
    ...FAILURE_SCENARIOS.map((scenario): [string, string] => [scenario.id, scenario.title]),
  ];
  const width = Math.max(...rows.map(([id]) => id.length));
  return rows.map(([id, title]) => `${id.padEnd(width)}  ${title}`).join('\n');
}
