import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { everyRelease, HOST_NODE } from './node-matrix';
import { OwnStoreProject, type SuiteRun } from './own-store-project';
import { packedPackages } from './packed-tarballs';

// A run of the suite takes seconds; on a loaded machine, Vitest's own start can take longer than the default.
vi.setConfig({ testTimeout: 180_000 });

/** Cases a store that lets two claims of one key win cannot pass. */
const BROKEN_BY_TWO_WINNERS = [
  'sharing one execution › executes once for 100 concurrent claims of one key; the other 99 replay the winner’s result',
  'fencing, leases and retention › keeps a slow live holder’s lease with the heartbeat: a duplicate waits, no second execution',
  'the same call sent twice by its owner › answers a claim resent by its owner claimed, with the same epoch; another owner still finds it in progress',
];
/** Cases that do not depend on a lease keeping anyone out: they pass on the broken store too. */
const UNTOUCHED_BY_TWO_WINNERS = [
  'releasing on failure › stores a final 4xx (422) and replays it',
  'connecting and answering health checks › connects again without harm, answers ping(), and serves claims after both',
];

const names = (run: SuiteRun, passed: boolean) => run.cases.filter((c) => c.passed === passed).map((c) => c.name);

describe('a store of its own, written against the packed public API, run through the conformance suite', () => {
  let work: string;
  let project: OwnStoreProject;
  let suite: string[];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'idempotency-own-store-'));
    project = await OwnStoreProject.install(join(work, 'project'), packedPackages());
    suite = await project.caseNames();
  }, 900_000);
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  // Every Node.js of the matrix: a store's conformance is what a team runs in its own CI, on its own Node.
  const runs = everyRelease().flatMap((node) => (['vitest', 'nodeTest'] as const).map((runner) => ({ runner, node })));
  it.each(runs)('passes every case under $runner on Node.js $node.version', async ({ runner, node }) => {
    const run = await project[runner]('map', node);

    expect(suite.length).toBeGreaterThan(0);
    expect({ exitCode: run.exitCode, failed: names(run, false) }).toEqual({ exitCode: 0, failed: [] });
    expect(names(run, true).sort()).toEqual([...suite].sort());
  });

  it.each(['vitest', 'nodeTest'] as const)('fails, naming the cases it breaks, when the store lets two claims win (%s)', async (runner) => {
    const run = await project[runner]('broken', HOST_NODE);

    expect(run.exitCode).not.toBe(0);
    expect(run.cases.map((c) => c.name).sort()).toEqual([...suite].sort());
    expect(names(run, false)).toEqual(expect.arrayContaining(BROKEN_BY_TWO_WINNERS));
    expect(names(run, true)).toEqual(expect.arrayContaining(UNTOUCHED_BY_TWO_WINNERS));
  });
});
