import { createCipheriv, randomBytes } from 'node:crypto';
import { AnswerEncryption, openStoredAnswer, UnreadableAnswer } from './answer-encryption';
import { encryptionKeysFromEnv } from './encryption-keys';
import { fingerprintDigest } from './fingerprint-digest';
import { InvalidPolicyError } from './errors';

const K1 = randomBytes(32);
const K2 = randomBytes(32);
const RECORD = 'a'.repeat(64);
const OTHER_RECORD = 'b'.repeat(64);
const FP = 'c'.repeat(64);
const OTHER_FP = 'd'.repeat(64);
const ANSWER = '{"status":201,"headers":{"location":"/charges/ch_SECRET"}}\n{"card":"4242","note":"ünïcode ✓"}';

const encryption = (keys: Array<{ id: string; key: Uint8Array | string }>, acceptPlaintext?: boolean) =>
  new AnswerEncryption({ keys, acceptPlaintext }, 'payments');

/** The reason `open` gives for not reading `stored`. */
function reason(open: () => string): string {
  try {
    open();
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableAnswer);
    return (error as Error).message;
  }
  throw new Error('the answer was read');
}

describe('AnswerEncryption', () => {
  const ring = encryption([{ id: 'k1', key: K1 }]);

  test('seals to the key id and base64 alone, opens to the same text, with a fresh IV each time', () => {
    const sealed = ring.seal(RECORD, FP, ANSWER);
    expect(sealed).toMatch(/^enc2:k1:[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain('SECRET');
    expect(Buffer.from(sealed.slice('enc2:k1:'.length), 'base64').length).toBe(12 + Buffer.byteLength(ANSWER) + 16);
    expect(ring.open(RECORD, FP, sealed)).toBe(ANSWER);
    expect(ring.seal(RECORD, FP, ANSWER)).not.toBe(sealed);
    expect(ring.open(RECORD, FP, ring.seal(RECORD, FP, ''))).toBe('');
  });

  test('never uses an IV twice, across refills of its random bytes', () => {
    const ivs = new Set(
      Array.from({ length: 1000 }, () =>
        Buffer.from(ring.seal(RECORD, FP, 'x').slice('enc2:k1:'.length), 'base64')
          .subarray(0, 12)
          .toString('hex'),
      ),
    );
    expect(ivs.size).toBe(1000);
  });

  test('an answer moved to another record does not open', () => {
    const sealed = ring.seal(RECORD, FP, ANSWER);
    expect(reason(() => ring.open(OTHER_RECORD, FP, sealed))).toMatch(/does not authenticate under key "k1"/);
  });

  test("an answer sealed for the fingerprint's digest (as a Redis record keeps it) opens with the fingerprint, and only its own", () => {
    // A store wrapper that does not forward keptFingerprint seals for the fingerprint; without it, for its digest.
    const sealed = ring.seal(RECORD, fingerprintDigest(FP), ANSWER);
    expect(ring.open(RECORD, FP, sealed)).toBe(ANSWER);
    expect(ring.open(RECORD, fingerprintDigest(FP), sealed)).toBe(ANSWER);
    expect(reason(() => ring.open(RECORD, OTHER_FP, sealed))).toMatch(/does not authenticate under key "k1"/);
    expect(reason(() => ring.open(OTHER_RECORD, FP, sealed))).toMatch(/does not authenticate under key "k1"/);
  });

  test('an answer put back for another request of the same record (another fingerprint) does not open', () => {
    const sealed = ring.seal(RECORD, FP, ANSWER);
    expect(reason(() => ring.open(RECORD, OTHER_FP, sealed))).toMatch(/does not authenticate under key "k1".*another request/);
    expect(ring.open(RECORD, FP, sealed)).toBe(ANSWER);
    // The two are bound apart: characters moved from the record key to the fingerprint are another binding.
    expect(reason(() => ring.open('ab', 'c', ring.seal('a', 'bc', ANSWER)))).toMatch(/does not authenticate/);
  });

  test('an answer of the retired enc1 format (bound to its record only) is refused, never taken for one in clear', () => {
    // What 0.x releases before enc2 stored: the record key and the key id as the only authenticated data.
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', K1, iv);
    cipher.setAAD(Buffer.from(`enc1:k1:${RECORD}`, 'utf8'));
    const bytes = Buffer.concat([iv, cipher.update(ANSWER, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    const retired = `enc1:k1:${bytes.toString('base64')}`;
    for (const reader of [ring, encryption([{ id: 'k1', key: K1 }], true)]) {
      expect(reason(() => reader.open(RECORD, FP, retired))).toMatch(/enc1 format of an earlier release.*no longer read/);
    }
    expect(reason(() => openStoredAnswer(undefined, RECORD, FP, retired))).toMatch(
      /encrypted, and this coordinator has no encryption keys/,
    );
  });

  test('any changed byte of IV, ciphertext or tag does not open', () => {
    const sealed = ring.seal(RECORD, FP, ANSWER);
    const bytes = Buffer.from(sealed.slice('enc2:k1:'.length), 'base64');
    for (const at of [0, 11, 12, bytes.length - 17, bytes.length - 16, bytes.length - 1]) {
      const changed = Buffer.from(bytes);
      changed[at] = (changed[at] as number) ^ 0x01;
      expect(reason(() => ring.open(RECORD, FP, `enc2:k1:${changed.toString('base64')}`))).toMatch(/does not authenticate/);
    }
    const cut = `enc2:k1:${bytes.subarray(0, bytes.length - 1).toString('base64')}`;
    expect(reason(() => ring.open(RECORD, FP, cut))).toMatch(/does not authenticate/);
  });

  test('a key id changed in the stored answer does not open, even where that id is in the keyring', () => {
    const both = encryption([
      { id: 'k2', key: K2 },
      { id: 'k1', key: K1 },
    ]);
    const sealed = both.seal(RECORD, FP, ANSWER);
    expect(reason(() => both.open(RECORD, FP, sealed.replace('enc2:k2:', 'enc2:k1:')))).toMatch(/does not authenticate under key "k1"/);
  });

  test('rotation: the first key seals, every key opens; a key dropped from the keyring is named as missing', () => {
    const before = ring.seal(RECORD, FP, ANSWER);
    const rotated = encryption([
      { id: 'k2', key: K2 },
      { id: 'k1', key: K1 },
    ]);
    expect(rotated.open(RECORD, FP, before)).toBe(ANSWER);
    const after = rotated.seal(RECORD, FP, ANSWER);
    expect(after.startsWith('enc2:k2:')).toBe(true);
    expect(reason(() => ring.open(RECORD, FP, after))).toBe('the stored answer was encrypted under key "k2", which is not in the keyring');
  });

  test('a wrong key under the right id does not open', () => {
    const wrong = encryption([{ id: 'k1', key: K2 }]);
    expect(reason(() => wrong.open(RECORD, FP, ring.seal(RECORD, FP, ANSWER)))).toMatch(/does not authenticate under key "k1"/);
  });

  test('an answer in clear opens only under acceptPlaintext', () => {
    expect(reason(() => ring.open(RECORD, FP, ANSWER))).toMatch(/in clear, and only encrypted answers are accepted/);
    expect(encryption([{ id: 'k1', key: K1 }], true).open(RECORD, FP, ANSWER)).toBe(ANSWER);
    // acceptPlaintext reads old records; it never lowers what an encrypted one must prove.
    expect(reason(() => encryption([{ id: 'k1', key: K2 }], true).open(RECORD, FP, ring.seal(RECORD, FP, ANSWER)))).toMatch(/authenticate/);
  });

  test('a malformed encrypted answer is refused with a bounded message', () => {
    expect(reason(() => ring.open(RECORD, FP, 'enc2:k1'))).toBe('the stored answer is not a whole encrypted answer');
    expect(reason(() => ring.open(RECORD, FP, `enc2:k1:${Buffer.alloc(27).toString('base64')}`))).toBe(
      'the stored answer is not a whole encrypted answer',
    );
    const longId = reason(() => ring.open(RECORD, FP, `enc2:${'x'.repeat(10_000)}:${Buffer.alloc(64).toString('base64')}`));
    expect(longId.length).toBeLessThan(120);
  });

  test('without encryption, answers in clear read as they are and encrypted ones are refused', () => {
    expect(openStoredAnswer(undefined, RECORD, FP, ANSWER)).toBe(ANSWER);
    expect(reason(() => openStoredAnswer(undefined, RECORD, FP, ring.seal(RECORD, FP, ANSWER)))).toBe(
      'the stored answer is encrypted, and this coordinator has no encryption keys',
    );
  });

  test("an app's own answer that merely begins with enc2: or enc1: replays where answers in clear are read", () => {
    const ownAnswers = (prefix: string) => [
      prefix,
      `${prefix}k1`,
      `${prefix}k1:not base64!`,
      `${prefix}${'x'.repeat(40)}:${Buffer.alloc(64).toString('base64')}`,
    ];
    for (const own of [...ownAnswers('enc2:'), ...ownAnswers('enc1:')]) {
      expect(openStoredAnswer(undefined, RECORD, FP, own)).toBe(own);
      expect(encryption([{ id: 'k1', key: K1 }], true).open(RECORD, FP, own)).toBe(own);
    }
  });
});

describe('the keyring', () => {
  const invalid = (keys: unknown) => {
    try {
      new AnswerEncryption({ keys } as never, 'payments');
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidPolicyError);
      return (error as Error).message;
    }
    throw new Error('the keyring was accepted');
  };

  test('takes a key as bytes, 64 hex digits, base64 or base64url, and the same key opens what each seals', () => {
    const forms = [K1, new Uint8Array(K1), K1.toString('hex'), K1.toString('base64'), K1.toString('base64url')];
    const sealed = encryption([{ id: 'k1', key: K1 }]).seal(RECORD, FP, ANSWER);
    for (const key of forms) expect(encryption([{ id: 'k1', key }]).open(RECORD, FP, sealed)).toBe(ANSWER);
  });

  test.each([
    ['a 31-byte Buffer', randomBytes(31), /"k1" must be 32 bytes for AES-256 \(got 31\)/],
    ['a 33-byte Buffer', randomBytes(33), /"k1" must be 32 bytes for AES-256 \(got 33\)/],
    ['63 hex digits', K1.toString('hex').slice(1), /"k1" must be 32 bytes as 64 hex digits or base64 \(got a string of 63 characters\)/],
    ['base64 of 24 bytes', randomBytes(24).toString('base64'), /got a string of 32 characters/],
    ['a passphrase', 'correct horse battery staple', /got a string of 28 characters/],
    ['a number', 42, /"k1" must be 32 bytes: a Buffer, 64 hex digits or base64 \(got number\)/],
  ])('refuses %s, naming the key id and never the key', (_, key, message) => {
    const text = invalid([{ id: 'k1', key }]);
    expect(text).toMatch(message);
    expect(text).toMatch(/^payments: encryption key "k1"/);
    if (typeof key === 'string') expect(text).not.toContain(key.slice(0, 8));
  });

  test('refuses ids that are empty, too long, unsafe or listed twice, and an empty keyring', () => {
    expect(invalid([])).toBe('payments: encryption.keys must list at least one key');
    expect(invalid(undefined)).toBe('payments: encryption.keys must list at least one key');
    expect(invalid([{ id: '', key: K1 }])).toBe(
      'payments: encryption key 1 has an id of 0 characters; an id is 1 to 32 characters of A-Z a-z 0-9 . _ -',
    );
    expect(invalid([{ id: 'k'.repeat(33), key: K1 }])).toMatch(/key 1 has an id of 33 characters; an id is 1 to 32 characters/);
    expect(encryption([{ id: 'k'.repeat(32), key: K1 }]).seal(RECORD, FP, 'x')).toMatch(/^enc2:k{32}:/);
    for (const id of ['k:1', 'k,1', 'k 1', 'ключ']) expect(invalid([{ id, key: K1 }])).toMatch(/an id is 1 to 32 characters/);
    expect(invalid([{ key: K1 }])).toMatch(/key 1 has no id \(undefined\)/);
    expect(
      invalid([
        { id: 'k1', key: K1 },
        { id: 'k1', key: K2 },
      ]),
    ).toBe('payments: encryption key id "k1" is listed twice');
  });

  test('never prints an id that is not one: a key written where its id belongs stays out of the message', () => {
    for (const secret of [K1.toString('base64'), K1.toString('hex')]) {
      const text = invalid([{ id: secret, key: K2 }]);
      expect(text).toMatch(/^payments: encryption key 1 has an id of \d+ characters/);
      expect(text).not.toContain(secret.slice(0, 6));
    }
  });

  test('refuses one key listed under two ids, and a placeholder of one byte repeated', () => {
    expect(
      invalid([
        { id: 'k2', key: K1.toString('hex') },
        { id: 'k1', key: K1 },
      ]),
    ).toBe('payments: encryption keys "k2" and "k1" are the same key');
    for (const byte of [0x00, 0xff]) {
      expect(invalid([{ id: 'k1', key: Buffer.alloc(32, byte) }])).toBe(
        'payments: encryption key "k1" is one byte repeated 32 times, not a random key',
      );
    }
  });
});

describe('encryptionKeysFromEnv', () => {
  test('reads id:key pairs, newest first, trimming blanks; the keyring takes them', () => {
    const env = { IDEMPOTENCY_ENCRYPTION_KEYS: ` k2:${K2.toString('base64')} , k1:${K1.toString('hex')}` };
    const keys = encryptionKeysFromEnv(undefined, env);
    expect(keys).toEqual([
      { id: 'k2', key: K2.toString('base64') },
      { id: 'k1', key: K1.toString('hex') },
    ]);
    const sealed = new AnswerEncryption({ keys }, 'payments').seal(RECORD, FP, ANSWER);
    expect(sealed.startsWith('enc2:k2:')).toBe(true);
    expect(encryption([{ id: 'k2', key: K2 }]).open(RECORD, FP, sealed)).toBe(ANSWER);
  });

  test('reads the variable named', () => {
    expect(encryptionKeysFromEnv('ANSWER_KEYS', { ANSWER_KEYS: `k1:${K1.toString('hex')}` })).toEqual([
      { id: 'k1', key: K1.toString('hex') },
    ]);
  });

  test('refuses an unset or empty variable, and an entry without a colon, without repeating the value', () => {
    expect(() => encryptionKeysFromEnv(undefined, {})).toThrow(/IDEMPOTENCY_ENCRYPTION_KEYS is not set/);
    expect(() => encryptionKeysFromEnv(undefined, { IDEMPOTENCY_ENCRYPTION_KEYS: '  ' })).toThrow(InvalidPolicyError);
    const secret = K1.toString('base64');
    const refusal = () => encryptionKeysFromEnv(undefined, { IDEMPOTENCY_ENCRYPTION_KEYS: `k2:${K2.toString('base64')},${secret}` });
    expect(refusal).toThrow('IDEMPOTENCY_ENCRYPTION_KEYS: entry 2 is not id:key');
  });
});
