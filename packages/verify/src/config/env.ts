/** `${NAME}` or `${NAME:-default}`, as in a shell or a compose file. */
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** A placeholder whose variable is unset and has no default, and where it is. */
export class UnsetVariable extends Error {
  constructor(
    readonly path: PropertyKey[],
    readonly variable: string,
  ) {
    super(`\${${variable}} is not set in the environment (give a default with \${${variable}:-value})`);
  }
}

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string of a parsed config with
 * the environment's values, so one file serves a laptop and CI (ports, database URLs,
 * secrets). A default also stands in for an empty variable, as in a shell. Throws an
 * {@link UnsetVariable} naming the field rather than sending a request to "undefined".
 */
export function expandEnv(value: unknown, env: NodeJS.ProcessEnv, path: PropertyKey[] = []): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (_, name: string, fallback: string | undefined) => {
      const set = env[name];
      if (set !== undefined && set !== '') return set;
      if (fallback !== undefined) return fallback;
      if (set !== undefined) return set;
      throw new UnsetVariable(path, name);
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expandEnv(item, env, [...path, index]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandEnv(item, env, [...path, key])]));
  }
  return value;
}
