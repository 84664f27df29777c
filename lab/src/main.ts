import './tracing'; // first, before any module it instruments
import 'reflect-metadata';
import { createLabApp } from './lab-app';
import { loadLabConfig } from './lab-config';
import { CHAIN, isServiceName } from './services';
import { bootFailure } from './unreachable';

/**
 * `node lab/dist/main.js <gateway|orders|payments>`: the service, from the
 * same environment its own `main.ts` reads, with the lab applied: fault
 * points armed over `PUT /lab/faults`, `KEY_POLICY` and `LAB_NAIVE`. A bad
 * environment exits 64 with one line naming the variable; a boot that fails
 * otherwise exits 1 (a store that does not answer, in one line).
 */
async function main(service: string): Promise<void> {
  if (!isServiceName(service)) {
    process.stderr.write(`usage: node lab/dist/main.js <${Object.keys(CHAIN).join('|')}>\n`);
    process.exit(64);
  }
  try {
    const lab = loadLabConfig();
    const chain = await CHAIN[service](process.env, lab);
    const app = await createLabApp(service, chain, lab);
    await chain.beforeListen?.(app);
    const { port, host } = chain.address(app);
    await app.listen(port, host);
  } catch (error) {
    const bad = (error as Error | undefined)?.name === 'ConfigError';
    process.stderr.write(`${service}: ${bad ? (error as Error).message : bootFailure(error)}\n`);
    process.exit(bad ? 64 : 1);
  }
}

void main(process.argv[2] ?? '');
