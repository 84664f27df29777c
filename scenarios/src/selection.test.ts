import { FAILURE_SCENARIOS } from './failures';
import { listing, SCENARIO_IDS, selectionFrom, UnknownScenarioError } from './selection';

describe('the scenarios a run runs', () => {
  it('runs everything when SCENARIOS is unset or empty', () => {
    for (const value of [undefined, '', ' , ']) expect(selectionFrom(value)).toEqual({ ids: SCENARIO_IDS, partial: false });
  });

  it("runs a selection in the runner's order, once each, as a partial run", () => {
    expect(selectionFrom('retention, write-up,retention')).toEqual({ ids: ['write-up', 'retention'], partial: true });
  });

  it('refuses an unknown id and names every valid one', () => {
    let error: unknown;
    try {
      selectionFrom('write-up,doubleclick');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UnknownScenarioError);
    expect((error as UnknownScenarioError).unknown).toEqual(['doubleclick']);
    for (const id of SCENARIO_IDS) expect((error as Error).message).toContain(id);
  });

  it('lists every id with its title', () => {
    const lines = listing().split('\n');
    expect(lines.map((line) => line.split(/\s+/)[0])).toEqual(SCENARIO_IDS);
    for (const scenario of FAILURE_SCENARIOS) expect(listing()).toContain(scenario.title);
  });
});
