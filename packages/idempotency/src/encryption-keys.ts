import { createSecretKey, type KeyObject } from 'node:crypto';
import { InvalidPolicyError } from './errors';

/**
 * One key of an {@link AnswerEncryptionOptions} keyring.
 *
 * @public
 */
export interface AnswerEncryptionKey {
  /**
   * Names the key in every record it encrypts, so the record finds it again
   * after a rotation: 1 to 32 characters of `A-Z a-z 0-9 . _ -`, unique in
   * the keyring. Stored in clear next to the ciphertext; never the key.
   */
  id: string;
  /** 32 bytes: as bytes, as 64 hex digits, or as base64 (or base64url) of 32 bytes. */
  key: Uint8Array | string;
}

/**
 * Encryption at rest of the answers a coordinator stores (AES-256-GCM, see
 * the README's "Encryption at rest").
 *
 * @example
 * new IdempotencyCoordinator({ service: 'payments', store, encryption: { keys: encryptionKeysFromEnv() } });
 *
 * @public
 */
export interface AnswerEncryptionOptions {
  /**
   * The keyring, newest first: the first key encrypts every answer stored
   * from now on, and every key listed decrypts the answers stored under it.
   * To rotate, list the new key last on every replica, then, once all of
   * them run with it, first; drop the old key one retention later.
   */
  keys: readonly AnswerEncryptionKey[];
  /**
   * Replay answers stored in clear (before encryption was turned on).
   * Default `false`: a record in clear is answered 500
   * `stored-answer-unreadable`, never replayed, since anybody who can write
   * to the store could plant one. Set it for one retention period after
   * turning encryption on, so the retries of earlier requests still replay.
   */
  acceptPlaintext?: boolean;
}

/** The variable {@link encryptionKeysFromEnv} reads by default. */
const ENCRYPTION_KEYS_ENV = 'IDEMPOTENCY_ENCRYPTION_KEYS';

const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9._-]{1,32}$/;
const HEX_KEY = /^[0-9a-fA-F]{64}$/;
/** 32 bytes in base64 or base64url: 43 characters, and one `=` of padding or none. */
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * The keyring in `IDEMPOTENCY_ENCRYPTION_KEYS` (or the variable named):
 * `id:key` pairs, newest first, separated by commas, each key as 64 hex
 * digits or base64 of 32 bytes. Set the same value on every replica.
 *
 * @example
 * // IDEMPOTENCY_ENCRYPTION_KEYS="k2:6tEwRn3W...=,k1:q0fB1Mx9...="   (openssl rand -base64 32)
 * IdempotencyModule.forRoot({ service: 'payments', store, encryption: { keys: encryptionKeysFromEnv() } });
 *
 * @throws InvalidPolicyError when the variable is unset or empty, or an
 *   entry is not `id:key`; the message never repeats the value.
 *
 * @public
 */
export function encryptionKeysFromEnv(name = ENCRYPTION_KEYS_ENV, env: NodeJS.ProcessEnv = process.env): AnswerEncryptionKey[] {
  const value = env[name]?.trim();
  if (!value) throw new InvalidPolicyError(`${name} is not set: give it the keyring as id:key pairs, newest first, separated by commas`);
  return value.split(',').map((entry, i) => {
    const separator = entry.indexOf(':');
    if (separator < 0) throw new InvalidPolicyError(`${name}: entry ${i + 1} is not id:key`);
    return { id: entry.slice(0, separator).trim(), key: entry.slice(separator + 1).trim() };
  });
}

/** A checked keyring: the key that encrypts, and every key by its id (made once: a key object per cipher costs microseconds). */
export interface Keyring {
  current: { id: string; key: KeyObject };
  byId: ReadonlyMap<string, KeyObject>;
}

/**
 * Check the keyring once, at construction, so a wrong key fails the boot
 * instead of every request. Messages name the key id, never the key.
 *
 * @throws InvalidPolicyError naming the key.
 */
export function checkKeyring(options: AnswerEncryptionOptions, where: string): Keyring {
  const { keys } = options ?? {};
  if (!Array.isArray(keys) || keys.length === 0) throw new InvalidPolicyError(`${where}: encryption.keys must list at least one key`);
  const byId = new Map<string, KeyObject>();
  const idOf = new Map<string, string>(); // the key's bytes (hex) to the id listing them
  for (const [i, entry] of (keys as readonly Partial<AnswerEncryptionKey>[]).entries()) {
    const id: unknown = entry?.id;
    if (typeof id !== 'string' || !KEY_ID.test(id)) {
      // Never echoed: an entry written the wrong way round (`key:id`) would print the key.
      const got = typeof id === 'string' ? `an id of ${id.length} characters` : `no id (${id === null ? 'null' : typeof id})`;
      throw new InvalidPolicyError(`${where}: encryption key ${i + 1} has ${got}; an id is 1 to 32 characters of A-Z a-z 0-9 . _ -`);
    }
    if (byId.has(id)) throw new InvalidPolicyError(`${where}: encryption key id "${id}" is listed twice`);
    const bytes = keyBytes(entry.key, `${where}: encryption key "${id}"`);
    const same = idOf.get(bytes.toString('hex'));
    if (same !== undefined) throw new InvalidPolicyError(`${where}: encryption keys "${same}" and "${id}" are the same key`);
    idOf.set(bytes.toString('hex'), id);
    byId.set(id, createSecretKey(bytes));
  }
  const [id, key] = byId.entries().next().value as [string, KeyObject]; // a Map keeps the order listed: the newest first
  return { current: { id, key }, byId };
}

function keyBytes(key: unknown, what: string): Buffer {
  let bytes: Buffer;
  if (key instanceof Uint8Array) bytes = Buffer.from(key);
  else if (typeof key === 'string' && HEX_KEY.test(key)) bytes = Buffer.from(key, 'hex');
  else if (typeof key === 'string' && BASE64_KEY.test(key)) bytes = Buffer.from(key, 'base64');
  else if (typeof key === 'string') {
    throw new InvalidPolicyError(`${what} must be 32 bytes as 64 hex digits or base64 (got a string of ${key.length} characters)`);
  } else throw new InvalidPolicyError(`${what} must be 32 bytes: a Buffer, 64 hex digits or base64 (got ${typeof key})`);
  if (bytes.length !== KEY_BYTES) throw new InvalidPolicyError(`${what} must be 32 bytes for AES-256 (got ${bytes.length})`);
  // A placeholder left in a config (all zeros, all 0xff): no random key looks like it.
  if (bytes.every((byte) => byte === bytes[0])) throw new InvalidPolicyError(`${what} is one byte repeated 32 times, not a random key`);
  return bytes;
}
