import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import * as core from '../../src';
import * as postgres from '../../src/postgres';
import * as migrations from '../../src/postgres/migrations';
import * as sql from '../../src/postgres/sql';
import * as redis from '../../src/redis';
import * as scripts from '../../src/redis/scripts';
import type { ModuleLoader, RecordFormat } from './record-format';

/**
 * A release of this package, as a deploy runs it: its own coordinator and
 * stores. The captured ones are their own code (scripts/capture-release.mjs),
 * typed here by the calls the side-by-side test makes, which every release
 * has answered the same way.
 */
export interface Release {
  name: string;
  load: ModuleLoader;
  core: typeof core;
  redis: typeof redis;
  postgres: typeof postgres;
}

/** A release captured before a format change, as format.json lists it. */
export interface CapturedRelease {
  release: string;
  commit: string;
  format: RecordFormat;
}

const current: Record<string, Record<string, unknown>> = {
  'index.ts': core,
  'redis/index.ts': redis,
  'redis/scripts.ts': scripts,
  'postgres/index.ts': postgres,
  'postgres/sql.ts': sql,
  'postgres/migrations.ts': migrations,
};

/** This release: the code under src/. */
export const CURRENT: Release = {
  name: 'this release',
  load: (path) => {
    const module = current[path];
    if (!module) throw new Error(`${path}: not a format-defining module of this release (add it to releases.ts)`);
    return module;
  },
  core,
  redis,
  postgres,
};

/** The format this release is recorded to have, and the releases it must run beside (format.json). */
export const FORMAT = JSON.parse(readFileSync(join(__dirname, 'format.json'), 'utf8')) as {
  current: RecordFormat;
  sideBySide: CapturedRelease[];
};

const load = createRequire(__filename);

/** A captured release from releases/, loaded by Node as it was compiled: its own copies of every module. */
export function capturedRelease(name: string): Release & { commit: string } {
  const loaded = load(`./releases/${name}.cjs`) as Release & { commit: string };
  return { name, commit: loaded.commit, load: loaded.load, core: loaded.core, redis: loaded.redis, postgres: loaded.postgres };
}
