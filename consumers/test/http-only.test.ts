import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppCopy } from './app-copy';
import { dropQueueFolder } from './http-only';
import { HOST_NODE } from './node-matrix';
import { packedPackages } from './packed-tarballs';
import { SERVICES } from './services';

// What payments' README promises a team that takes only HTTP: one folder and one import out, and the app works as it did.
describe('apps/payments copied alone without its queue folder', () => {
  let work: string;
  let copy: AppCopy;
  let dropped: string[];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'idempotency-http-only-'));
    copy = await AppCopy.copy('payments', join(work, 'payments'));
    dropped = await dropQueueFolder(copy.folder);
    await copy.install(packedPackages());
  }, 600_000);
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('builds, lints, passes its own tests and answers GET /health once src/queue/ and its import are deleted', async () => {
    expect(dropped).toEqual([
      "import { ChargeQueueModule } from './queue/charge-queue.module.js';",
      '// Charges from a queue (CHARGE_TRANSPORT): an app that takes only HTTP deletes this line and the queue/ folder.',
      'ChargeQueueModule.forRoot(env ?? process.env),',
    ]);
    await copy.run('build');
    expect(await copy.run('lint')).toMatch(/^> oxlint --type-aware src\/$/m);
    expect(await copy.run('test', SERVICES)).toMatch(/^> vitest run$/m);
    expect(await copy.startedHealth(HOST_NODE, SERVICES)).toMatchObject({ status: 200, body: { status: 'ok' } });
  }, 600_000);
});
