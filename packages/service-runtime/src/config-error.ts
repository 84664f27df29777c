/** Thrown for a bad environment value; its message is meant for the operator. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
