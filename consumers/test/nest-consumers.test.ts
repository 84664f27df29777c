import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { commandResult } from './command';
import { COMPILE_VARIANTS } from './compile-variants';
import { LIBRARIES, type LibraryName, type Tarballs } from './packed-packages';
import { packedPackages } from './packed-tarballs';
import { missingMapSources } from './map-sources';
import { RunningApp } from './running-app';
import { everyRelease, pathFor } from './node-matrix';
import { NEST_MAJORS, ScratchProject } from './scratch-project';
import { keysUnder } from './store-keys';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TENANT = { 'x-tenant': 'tenant-a' };
const workspaceVersion = (library: LibraryName) =>
  (JSON.parse(readFileSync(require.resolve(`${library}/package.json`), 'utf8')) as { version: string }).version;

describe('the packed libraries in a scratch NestJS app outside the workspace', () => {
  let work: string;
  let tarballs: Tarballs;
  let redis: Redis;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'idempotency-consumers-'));
    redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    tarballs = packedPackages();
  }, 600_000);
  afterAll(async () => {
    redis?.disconnect();
    if (work) await rm(work, { recursive: true, force: true });
  });

  describe.each(NEST_MAJORS)('NestJS %i', (major) => {
    let project: ScratchProject;
    let builds: Map<string, Promise<string>>;
    beforeAll(async () => {
      project = await ScratchProject.install(join(work, `nest${major}`), major, tarballs);
      // The variants compile side by side; each one's own hook awaits (and reports) its build.
      builds = new Map(COMPILE_VARIANTS.map((variant) => [variant.name, project.compile(variant)]));
      for (const build of builds.values()) build.catch(() => undefined);
    }, 600_000);

    it(`installs NestJS ${major} as its lock pins it and the libraries from their tarballs, with the sources their maps point at`, async () => {
      expect(await project.installedVersion('@nestjs/common')).toMatch(new RegExp(`^${major}\\.`));
      expect(await project.installedVersion('@nestjs/core')).toMatch(new RegExp(`^${major}\\.`));
      for (const library of LIBRARIES) {
        expect(await project.installedVersion(library)).toBe(workspaceVersion(library));
        // Declaration maps and source maps lead to sources the tarball ships.
        expect(await missingMapSources(project.packageFolder(library))).toEqual([]);
      }
    });

    it.each(everyRelease())(
      'links the idempotency-records bin, which looks a record up in a real Redis on Node.js $version: absent, exit 1, one audit line',
      async (node) => {
        const bin = join(project.folder, 'node_modules', '.bin', 'idempotency-records');
        const record = randomUUID().replace(/-/g, '').repeat(2);
        const run = await commandResult(
          bin,
          ['inspect', '--store', REDIS_URL, '--prefix', `consumers-test:${randomUUID()}:`, '--record', record],
          { cwd: project.folder, timeoutMs: 60_000, env: pathFor(node) },
        );
        expect(run).toMatchObject({ exitCode: 1, stdout: expect.stringContaining(`record ${record}: absent`) });
        // The audit line names the record by a keyed reference, never by the record key itself.
        expect(JSON.parse(run.stderr)).toMatchObject({
          action: 'inspect',
          recordRef: expect.stringMatching(/^[0-9a-f]{12}$/),
          outcome: 'absent',
        });
        expect(run.stderr).not.toContain(record);
      },
    );

    // Compiled once, run on every Node.js of the matrix: what a team deploys is this output.
    describe.each(COMPILE_VARIANTS.flatMap((variant) => everyRelease().map((node) => ({ variant, node }))))(
      'compiled as $variant.name, on Node.js $node.version',
      ({ variant, node }) => {
        const prefix = `consumers-test:${randomUUID()}:`;
        let app: RunningApp | undefined;
        const charge = (key: string, amountCents: number) => app!.post('/charges', { amountCents }, { 'idempotency-key': key, ...TENANT });

        beforeAll(async () => {
          const entry = await builds.get(variant.name)!;
          app = await RunningApp.start(entry, { REDIS_URL, STORE_PREFIX: prefix }, node);
        }, 600_000);
        afterAll(async () => {
          await app?.stop();
          const left = await keysUnder(redis, prefix);
          if (left.length > 0) await redis.unlink(...left);
        });

        it('answers a protected route, replays it, and refuses the key with another body (422)', async () => {
          const key = randomUUID();
          const first = await charge(key, 500);
          const replay = await charge(key, 500);
          const reused = await charge(key, 501);

          expect(first).toMatchObject({ status: 201, replayed: null });
          expect(JSON.parse(first.text)).toEqual({ chargeId: expect.any(String), amountCents: 500 });
          expect(replay).toEqual({ status: 201, text: first.text, replayed: 'true' });
          expect(reused.status).toBe(422);
          expect(JSON.parse(reused.text)).toMatchObject({ type: 'urn:idempotency-chain:problem:key-reused', status: 422 });
          // The record is in the real Redis, under this app's prefix.
          expect((await keysUnder(redis, prefix)).length).toBeGreaterThan(0);
        });

        it("stores and replays the app's own HttpException: one @nestjs/common across module systems", async () => {
          const key = randomUUID();
          const first = await charge(key, 1_000_000);
          const replay = await charge(key, 1_000_000);

          expect(first).toMatchObject({ status: 403, replayed: null });
          expect(replay).toEqual({ status: 403, text: first.text, replayed: 'true' });
        });
      },
    );
  });
});
