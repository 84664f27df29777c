/** Thrown for a bad environment value; its message is meant for the operator, on one line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Typed, validated reads of `env`, for what the lab reads itself (its
 * policies, and where it keeps what payments refuses to keep); each throws
 * `ConfigError` naming the variable, the value and what is allowed. An
 * empty variable counts as unset. The apps validate their own environments.
 */
export function environmentReader(env: NodeJS.ProcessEnv) {
  const fail = (name: string, value: string, expected: string): never => {
    throw new ConfigError(`${name}=${JSON.stringify(value)} is not valid: expected ${expected}`);
  };
  const raw = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  return {
    string: (name: string, fallback: string) => raw(name) ?? fallback,
    oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
      const value = raw(name) ?? fallback;
      if (!allowed.includes(value as T)) fail(name, value, `one of ${allowed.join(', ')}`);
      return value as T;
    },
    list<T extends string>(name: string, allowed: readonly T[]): T[] {
      const values = (raw(name) ?? '')
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
      for (const value of values) {
        if (!allowed.includes(value as T)) fail(name, value, `a comma-separated list of ${allowed.join(', ')}`);
      }
      return values as T[];
    },
    url(name: string, fallback: string, protocols: string[]): string {
      const value = raw(name) ?? fallback;
      if (!URL.canParse(value) || !protocols.includes(new URL(value).protocol)) fail(name, value, `a URL (${protocols.join(' or ')})`);
      return value;
    },
  };
}
