import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { APP_FIXTURES, APPS, committedLock, type Lock } from './fixture';

const WORKSPACE_LOCK = JSON.parse(readFileSync(resolve(__dirname, '../../package-lock.json'), 'utf8')) as Lock;

/** The version the workspace installs of `name` for `apps/<app>`: nested under the app, else hoisted. */
function workspaceVersion(app: string, name: string): string | undefined {
  return (WORKSPACE_LOCK.packages[`apps/${app}/node_modules/${name}`] ?? WORKSPACE_LOCK.packages[`node_modules/${name}`])?.version;
}

// A copied-out app is tested with what the workspace tests it with: a bump in the workspace's lock that
// the fixture locks did not follow would test the copies on releases nothing else here runs.
describe("the copied-out apps' locks", () => {
  it.each(APP_FIXTURES)('apps/%s: every registry dependency at the version the workspace lock pins', async (app) => {
    const manifest = JSON.parse(readFileSync(resolve(APPS, app, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    const lock = await committedLock(app);
    const names = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter(
      (name) => !name.startsWith('@idempotency-chain/'),
    );
    const differing = names
      .map((name) => ({ name, workspace: workspaceVersion(app, name), fixture: lock.packages[`node_modules/${name}`]?.version }))
      .filter(({ workspace, fixture }) => workspace !== fixture);
    expect(differing, 'run npm run fixtures:lock -w @idempotency-chain/consumers').toEqual([]);
  });
});
