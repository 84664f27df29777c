import canonicalize from 'canonicalize';
import { canonicalJson, MAX_CANONICAL_DEPTH, TooDeepError } from './canonical-json';

/** A random JSON value: the shapes and the characters canonical forms trip on. */
function randomJson(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * (depth > 4 ? 4 : 6));
  const strings = ['', 'a', 'é', '€', '\u2028', '"\\', '\ud83d\ude00', 'z', 'A', '10', '1', '\u0000'];
  const numbers = [0, -0, 1, -1.5, 1e21, 1e-7, 123456789012345680000, 5e-324, 0.1 + 0.2, 100];
  switch (pick) {
    case 0:
      return null;
    case 1:
      return numbers[Math.floor(random() * numbers.length)];
    case 2:
      return strings[Math.floor(random() * strings.length)];
    case 3:
      return random() < 0.5;
    case 4:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 5); i > 0; i--)
        object[strings[Math.floor(random() * strings.length)]!] = randomJson(random, depth + 1);
      return object;
    }
  }
}

/** A small deterministic generator, so a failure names its seed. */
function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('canonicalJson', () => {
  it('matches the canonicalize package (RFC 8785) on 2,000 random JSON values', () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const value = randomJson(mulberry32(seed));
      expect({ seed, json: canonicalJson(value) }).toEqual({ seed, json: canonicalize(value) });
    }
  });

  it('sorts members by UTF-16 code units and leaves no whitespace', () => {
    // RFC 8785's own example order: U+20AC sorts before the surrogate pair of U+1F600, which sorts before U+FB33.
    expect(canonicalJson({ b: 1, '\ufb33': 'z', a: [1, { d: true, c: null }], '\ud83d\ude00': 'y', '\u20ac': 'x' })).toBe(
      '{"a":[1,{"c":null,"d":true}],"b":1,"\u20ac":"x","\ud83d\ude00":"y","\ufb33":"z"}',
    );
  });

  it('orders small objects (sorted by insertion) and large ones (by sort()) alike, whatever the key sizes', () => {
    const random = mulberry32(7);
    const names = ['10', '9', 'a', 'B', '\u20ac', '\ud83d\ude00', '\ufb33', '', ' ', 'aa', 'a\u0000', '\u00e9', 'Z', '01', '1', '__proto_'];
    for (const size of [0, 1, 2, 15, 16, 17, 40]) {
      const keys = Array.from({ length: size }, (_, i) => `${names[Math.floor(random() * names.length)]}${i % 3 ? i : ''}`);
      const value = Object.fromEntries(keys.map((key, i) => [key, i]));
      expect({ size, json: canonicalJson(value) }).toEqual({ size, json: canonicalize(value) });
    }
  });

  it(`allows ${MAX_CANONICAL_DEPTH} levels of nesting and refuses the next, without recursing further`, () => {
    const nested = (levels: number) => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);
    expect(canonicalJson(nested(MAX_CANONICAL_DEPTH))).toBe(`${'['.repeat(MAX_CANONICAL_DEPTH)}${']'.repeat(MAX_CANONICAL_DEPTH)}`);
    expect(() => canonicalJson(nested(MAX_CANONICAL_DEPTH + 1))).toThrow(TooDeepError);
    expect(() => canonicalJson(nested(100_000))).toThrow(TooDeepError);
  });

  it('refuses what JSON cannot hold', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
  });
});
