import { createCipheriv, createDecipheriv, randomFillSync, type KeyObject } from 'node:crypto';
import { checkKeyring, type AnswerEncryptionOptions, type Keyring } from './encryption-keys';
import { fingerprintDigest } from './fingerprint-digest';

/**
 * Starts every encrypted answer and names its format: AES-256-GCM, a random
 * 12-byte IV, a 16-byte tag, bound to the record and to the request's
 * fingerprint. No answer the coordinator or the NestJS integration stores
 * in clear starts with it (they start with JSON or `!`).
 */
const SEALED = 'enc2:';
/**
 * The format of 0.x releases before `enc2:`, bound to the record only (not
 * to the request): never opened, so an answer of it is unreadable, and
 * never taken for an answer in clear either.
 */
const RETIRED = 'enc1:';
/**
 * The whole form {@link AnswerEncryption.seal} writes (or the retired one
 * wrote): the prefix, a key id and base64 of at least an IV and a tag.
 * Where answers in clear are read too, only this form is taken for an
 * encrypted one, so an answer of an app's own that merely begins with
 * `enc2:` still replays.
 */
const SEALED_FORM = /^enc[12]:[A-Za-z0-9._-]{1,32}:[A-Za-z0-9+/]{38,}={0,2}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

/**
 * IVs are cut from one buffer of random bytes, refilled when used up: a
 * `randomBytes(12)` call per answer cost about as much as the encryption
 * itself. Every IV is still 12 fresh bytes from the CSPRNG, used once.
 */
const ivs = Buffer.alloc(IV_BYTES * 256);
let nextIv = ivs.length;
function freshIv(): Buffer {
  if (nextIv === ivs.length) {
    randomFillSync(ivs);
    nextIv = 0;
  }
  nextIv += IV_BYTES;
  return ivs.subarray(nextIv - IV_BYTES, nextIv);
}

/**
 * Why a stored answer cannot be read. Reported to the observer (logs,
 * traces); the caller is only told that it cannot be, never why.
 */
export class UnreadableAnswer extends Error {
  override name = 'UnreadableAnswer';
}

/**
 * Encrypts the answers a coordinator stores and decrypts them on replay:
 * each under the keyring's first key with a random IV, and with the key
 * id, the record's identity (its record key, a hash of service, operation,
 * scope and key) and the fingerprint of the request it answers as
 * additional authenticated data. So an answer copied to another record,
 * tenant or key, or put back into its own record after the key was used
 * for another request (another body), or changed by one bit, does not
 * decrypt.
 *
 * The fingerprint is bound in one of two forms, both the request's own: the
 * fingerprint, or its digest (`fingerprintDigest`, what a `RedisStore`
 * record keeps). An answer opens under either, so what it is bound to never
 * depends on the store: a store wrapper that does not forward
 * `keptFingerprint`, added or removed in a deploy, seals in the other form,
 * and every answer still opens. Sealing still uses the form the store
 * keeps, the one every earlier release opens, and the one an operator finds
 * in the record (`inspectRecord`).
 *
 * ```text
 * enc2:<key id>:base64(iv[12] | ciphertext | tag[16])
 * ```
 */
export class AnswerEncryption {
  private readonly keyring: Keyring;
  private readonly acceptPlaintext: boolean;

  /** @throws InvalidPolicyError naming the key, for a keyring that could not encrypt or decrypt. */
  constructor(options: AnswerEncryptionOptions, where: string) {
    this.keyring = checkKeyring(options, where);
    this.acceptPlaintext = options.acceptPlaintext === true;
  }

  /** `answer` as the store keeps it for the request of `fingerprint` at `recordKey`. */
  seal(recordKey: string, fingerprint: string, answer: string): string {
    const { id, key } = this.keyring.current;
    const iv = freshIv();
    const cipher = createCipheriv(ALGORITHM, key, iv);
    cipher.setAAD(authenticatedData(id, recordKey, fingerprint));
    const sealed = Buffer.concat([iv, cipher.update(answer, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED}${id}:${sealed.toString('base64')}`;
  }

  /**
   * The answer {@link seal} stored for the request of `fingerprint` at
   * `recordKey` (the request's fingerprint, or its digest as a record
   * keeps it), or one stored in clear when `acceptPlaintext` is set.
   *
   * @throws UnreadableAnswer saying why it cannot be read.
   */
  open(recordKey: string, fingerprint: string, stored: string): string {
    if (this.acceptPlaintext && !isSealedAnswer(stored)) return stored;
    if (stored.startsWith(RETIRED) && isSealedAnswer(stored)) {
      throw new UnreadableAnswer(
        'the stored answer is in the enc1 format of an earlier release, bound to its record but not to its request, which is no longer read',
      );
    }
    if (!stored.startsWith(SEALED)) {
      throw new UnreadableAnswer('the stored answer is in clear, and only encrypted answers are accepted (acceptPlaintext is off)');
    }
    const separator = stored.indexOf(':', SEALED.length);
    const id = stored.slice(SEALED.length, separator);
    const sealed = Buffer.from(stored.slice(separator + 1), 'base64');
    if (separator < 0 || sealed.length < IV_BYTES + TAG_BYTES)
      throw new UnreadableAnswer('the stored answer is not a whole encrypted answer');
    const key = this.keyring.byId.get(id);
    if (!key)
      throw new UnreadableAnswer(
        `the stored answer was encrypted under key ${JSON.stringify(id.slice(0, 32))}, which is not in the keyring`,
      );
    for (const bound of [fingerprint, fingerprintDigest(fingerprint)]) {
      const answer = decrypt(key, sealed, authenticatedData(id, recordKey, bound));
      if (answer !== undefined) return answer;
    }
    throw new UnreadableAnswer(
      `the stored answer does not authenticate under key "${id}": a wrong key, changed bytes, or an answer moved from another record or another request`,
    );
  }
}

/** `sealed` (IV, ciphertext, tag) decrypted under `key` for `aad`, or undefined when it does not authenticate. */
function decrypt(key: KeyObject, sealed: Buffer, aad: Buffer): string | undefined {
  const decipher = createDecipheriv(ALGORITHM, key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * The answer stored for the request of `fingerprint` at `recordKey`,
 * readable: decrypted under `encryption`, or as stored without it - unless
 * it is encrypted, which a coordinator without keys cannot read either.
 *
 * @throws UnreadableAnswer saying why it cannot be read.
 */
export function openStoredAnswer(encryption: AnswerEncryption | undefined, recordKey: string, fingerprint: string, stored: string): string {
  if (encryption) return encryption.open(recordKey, fingerprint, stored);
  if (isSealedAnswer(stored)) throw new UnreadableAnswer('the stored answer is encrypted, and this coordinator has no encryption keys');
  return stored;
}

/** Whether `stored` has the form of an encrypted answer (see {@link AnswerEncryption.seal}). */
export function isSealedAnswer(stored: string): boolean {
  return SEALED_FORM.test(stored);
}

/**
 * What binds an answer to its record, to the request it answers, and to
 * the key id it names: a JSON array, so no two bindings share one (a
 * fingerprint is any string a caller gives).
 */
function authenticatedData(keyId: string, recordKey: string, fingerprint: string): Buffer {
  return Buffer.from(JSON.stringify([SEALED, keyId, recordKey, fingerprint]), 'utf8');
}
