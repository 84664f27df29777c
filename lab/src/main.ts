import './tracing'; // first, before any module it instruments
import 'reflect-metadata';
import { ConfigError, runService } from '@idempotency-chain/service-runtime';
import { createLabApp } from './lab-app';
import { loadLabConfig, type LabConfig } from './lab-config';
import { CHAIN, isServiceName } from './services';

/**
 * `node lab/dist/main.js <gateway|orders|payments>`: the service, from the
 * same environment its own `main.ts` reads, with the lab applied: fault
 * points armed over `PUT /lab/faults`, `KEY_POLICY` and `LAB_NAIVE`.
 */
function labFromEnvironment(service: string): LabConfig {
  try {
    return loadLabConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${service}: ${error.message}\n`);
    process.exit(64);
  }
}

const service = process.argv[2];
if (!isServiceName(service)) {
  process.stderr.write(`usage: node lab/dist/main.js <${Object.keys(CHAIN).join('|')}>\n`);
  process.exit(64);
}
const lab = labFromEnvironment(service);
void runService(service, (config) => createLabApp(service, config, lab), { beforeListen: CHAIN[service].beforeListen });
