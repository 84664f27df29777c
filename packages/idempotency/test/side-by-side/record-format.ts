import { createHash } from 'node:crypto';

/** A module of a release by its path under src/ (`redis/scripts.ts`), as the release's own code exports it. */
export type ModuleLoader = (path: string) => Record<string, unknown>;

/**
 * What a release's records are, in parts a change names: every value a
 * format-defining module exports (the Redis scripts, the PostgreSQL
 * statements and migrations, as the release sends them) and the keys a
 * record is kept under. Two releases whose parts agree read and write each
 * other's records as their own; a part that differs is a format change,
 * which must be run side by side with the release before it (see
 * side-by-side.test.ts).
 */
export type RecordFormat = Record<'record keys' | 'redis scripts' | 'postgres statements' | 'postgres migrations', string>;

const SAMPLE_SCHEMA = '"sample_schema"';

/** The format of the release whose modules `load` gives, each part a SHA-256 in hex. */
export function recordFormat(load: ModuleLoader): RecordFormat {
  const core = load('index.ts') as {
    IdempotencyCoordinator: new (options: object) => { recordKey(o: string, s: string, k: string): string };
  };
  const memory = new (load('index.ts').MemoryStore as new () => object)();
  const recordKey = new core.IdempotencyCoordinator({ service: 'sample-service', store: memory }).recordKey('charge', 'tenant:a', 'key-1');
  const redisRecordKey = load('redis/index.ts').redisRecordKey as (recordKey: string, prefix?: string) => string;
  const migrations = load('postgres/migrations.ts');
  return {
    'record keys': digest([recordKey, redisRecordKey(recordKey), redisRecordKey(recordKey, 'p:')]),
    'redis scripts': digest(exported(load('redis/scripts.ts'), ['PUBLISH', 'SPUBLISH'])),
    'postgres statements': digest(exported(load('postgres/sql.ts'), [SAMPLE_SCHEMA])),
    'postgres migrations': digest([
      (migrations.MIGRATIONS as { version: number; name: string; sql(s: string): string }[]).map((m) => [
        m.version,
        m.name,
        m.sql(SAMPLE_SCHEMA),
      ]),
      migrations.RECORD_COLUMNS ?? null,
    ]),
  };
}

/** Every export of `module` by name, a function's as what it returns for each of `args` (one argument each). */
function exported(module: Record<string, unknown>, args: string[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(module).sort()) {
    const value = module[name];
    values[name] = typeof value === 'function' ? args.map((arg) => (value as (arg: string) => unknown)(arg)) : value;
  }
  return values;
}

function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}
