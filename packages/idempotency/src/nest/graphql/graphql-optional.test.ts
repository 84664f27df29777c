import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Loads the Nest integration from its sources in a Node process of its own
 * (through jiti, which compiles every import to a `require`), and says which
 * packages it loaded: Vitest's own module graph would hide an ESM import.
 */
const LOAD = `
const { createJiti } = require('jiti');
const nest = createJiti(process.cwd() + '/')('./src/nest/index.ts');
const loaded = (name) => Object.keys(require.cache).some((path) => path.includes('/node_modules/' + name + '/'));
process.stdout.write(JSON.stringify({
  runner: typeof nest.IdempotencyRunner,
  nestCommon: loaded('@nestjs/common'),
  graphql: loaded('graphql'),
  nestGraphql: loaded('@nestjs/graphql'),
}));
`;

describe('the Nest integration in an app without GraphQL', () => {
  it('loads neither graphql nor @nestjs/graphql until a GraphQL operation arrives', () => {
    const output = execFileSync(process.execPath, ['-e', LOAD], { cwd: join(__dirname, '../../..'), encoding: 'utf8', timeout: 60_000 });

    // @nestjs/common shows that what the integration imports is seen.
    expect(JSON.parse(output)).toEqual({ runner: 'function', nestCommon: true, graphql: false, nestGraphql: false });
  });
});
