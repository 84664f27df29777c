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

  it('keeps the forms it wrote before it took a bigint, a Map or a Set: stored fingerprints still match', () => {
    expect(canonicalJson({ b: 1, a: [1, { d: true, c: null }], '\u20ac': 'x' })).toBe('{"a":[1,{"c":null,"d":true}],"b":1,"\u20ac":"x"}');
    expect(canonicalJson([0, -0, 1e21, 1e-7, 0.1 + 0.2, 'é\u2028"\\\u0000', [], {}])).toBe(
      '[0,0,1e+21,1e-7,0.30000000000000004,"é\u2028\\"\\\\\\u0000",[],{}]',
    );
    expect(canonicalJson({ skipped: undefined, f: () => 1, when: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), list: [undefined, null] })).toBe(
      '{"list":[null,null],"when":"2026-01-02T03:04:05.000Z"}',
    );
  });

  it('counts a toJSON call as a level: a chain of them is TooDeepError, not a stack overflow', () => {
    const chain = (): object => ({ toJSON: chain });
    expect(() => canonicalJson(chain())).toThrow(TooDeepError);
    // What a toJSON returns is written as before; a Date in a list takes the two levels it always took.
    const date = new Date(Date.UTC(2026, 0, 2));
    expect(canonicalJson([date], 2)).toBe('["2026-01-02T00:00:00.000Z"]');
    expect(() => canonicalJson([date], 1)).toThrow(TooDeepError);
    const described = { toJSON: () => ({ b: 2, a: [1] }) };
    expect(canonicalJson(described)).toBe('{"a":[1],"b":2}');
    expect(canonicalJson(described, 3)).toBe('{"a":[1],"b":2}');
    expect(() => canonicalJson(described, 2)).toThrow(TooDeepError);
  });

  it('refuses what has no canonical form', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ n: Number.POSITIVE_INFINITY })).toThrow(TypeError);
    expect(() => canonicalJson([() => 1])).toThrow(TypeError);
    expect(() => canonicalJson(Symbol('s'))).toThrow(TypeError);
  });

  it('refuses a Proxy of a Map or a Set, whose contents cannot be read, in its own words', () => {
    const map = new Proxy(new Map([['a', 1]]), {});
    expect(map).toBeInstanceOf(Map);
    expect(() => canonicalJson(map)).toThrow(
      new TypeError('a Map that cannot be iterated (such as a Proxy of a Map) has no canonical form'),
    );
    expect(() => canonicalJson({ counts: map })).toThrow(/^a Map that cannot be iterated/);
    expect(() => canonicalJson(new Map([[map, 1]]))).toThrow(/^a Map that cannot be iterated/);
    expect(() => canonicalJson(new Proxy(new Set([1]), {}))).toThrow(
      new TypeError('a Set that cannot be iterated (such as a Proxy of a Set) has no canonical form'),
    );
    expect(() => canonicalJson(Object.create(Map.prototype))).toThrow(/^a Map that cannot be iterated/);
    // A subclass is a Map the engine reads.
    expect(canonicalJson(new (class Counts extends Map<string, number> {})([['a', 1]]))).toBe('Map{"a":1}');
  });
});

describe('canonicalJson beyond JSON', () => {
  /** One of each kind of value a form might be mistaken for. */
  const kinds: unknown[] = [
    null,
    true,
    0,
    1,
    '1',
    '1n',
    'Map{}',
    0n,
    1n,
    -1n,
    [],
    [1],
    [['a', 1]],
    {},
    { a: 1 },
    new Map(),
    new Map([['a', 1]]),
    new Map([[1, 1]]),
    new Map([[1n, 1]]),
    new Map([[undefined, 1]]),
    new Map([[null, 1]]),
    new Set(),
    new Set([1]),
    new Set(['a']),
    new Set([1n]),
    new Set([undefined]),
    new Set([null]),
    new Set([new Set()]),
    new Set([new Map()]),
    new Set([[]]),
  ];

  it('writes a bigint as its digits and n, unquoted', () => {
    expect(canonicalJson(0n)).toBe('0n');
    expect(canonicalJson(-12345678901234567890n)).toBe('-12345678901234567890n');
    expect(canonicalJson({ amount: 9007199254740993n, list: [1n, 2] })).toBe('{"amount":9007199254740993n,"list":[1n,2]}');
    // 2^53 + 1 as a double is 2^53: only the bigint keeps them apart.
    expect(canonicalJson(9007199254740993n)).not.toBe(canonicalJson(9007199254740992n));
  });

  it('writes a Map as its entries sorted by their key, marked apart from an object and an array', () => {
    expect(canonicalJson(new Map())).toBe('Map{}');
    expect(
      canonicalJson(
        new Map<unknown, unknown>([
          ['b', { y: 2, x: 1 }],
          ['a', 1n],
        ]),
      ),
    ).toBe('Map{"a":1n,"b":{"x":1,"y":2}}');
  });

  it("writes a Map alike whatever its entries' order, keys of every type among them", () => {
    const entries: Array<[unknown, unknown]> = [
      ['1', 'string'],
      [1, 'number'],
      [1n, 'bigint'],
      [true, 'boolean'],
      [null, 'null'],
      [undefined, 'undefined'],
      [{ b: 1, a: 2 }, 'object'],
      [[1, 2], 'array'],
      [new Map([['k', 1]]), 'map'],
      [new Set([2, 1]), 'set'],
      [12, 'twelve'],
    ];
    const written = canonicalJson(new Map(entries));
    expect(written).toBe(
      'Map{"1":"string",1:"number",12:"twelve",1n:"bigint",Map{"k":1}:"map",Set[1,2]:"set",[1,2]:"array",' +
        'null:"null",true:"boolean",undefined:"undefined",{"a":2,"b":1}:"object"}',
    );
    const random = mulberry32(11);
    for (let round = 0; round < 50; round++) {
      const shuffled = [...entries].sort(() => random() - 0.5);
      expect(canonicalJson(new Map(shuffled))).toBe(written);
    }
  });

  it('orders entries whose keys have one form by their value: two equal objects as keys', () => {
    const a = new Map<unknown, unknown>([
      [{ id: 1 }, 'x'],
      [{ id: 1 }, 'y'],
    ]);
    const b = new Map<unknown, unknown>([
      [{ id: 1 }, 'y'],
      [{ id: 1 }, 'x'],
    ]);
    expect(canonicalJson(a)).toBe('Map{{"id":1}:"x",{"id":1}:"y"}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it('writes a Set as its elements sorted by their form, whatever their order', () => {
    expect(canonicalJson(new Set())).toBe('Set[]');
    expect(canonicalJson(new Set<unknown>([2, 'a', 10n, { b: 1, a: 0 }]))).toBe('Set["a",10n,2,{"a":0,"b":1}]');
    expect(canonicalJson(new Set<unknown>([{ a: 0, b: 1 }, 10n, 'a', 2]))).toBe(
      canonicalJson(new Set<unknown>([2, 'a', 10n, { b: 1, a: 0 }])),
    );
    // Two distinct objects of one content are two elements.
    expect(canonicalJson(new Set([{}, {}]))).toBe('Set[{},{}]');
  });

  it('gives every kind of value a form of its own: no JSON value, Map, Set or bigint writes as another', () => {
    const forms = kinds.map((value) => canonicalJson(value));
    expect(new Set(forms).size).toBe(kinds.length);
    // And so inside an object or an array, where a request's values sit.
    expect(new Set(kinds.map((value) => canonicalJson({ value }))).size).toBe(kinds.length);
    expect(new Set(kinds.map((value) => canonicalJson([value]))).size).toBe(kinds.length);
  });

  it('tells apart Maps and Sets of other contents, which were all written {} before', () => {
    expect(canonicalJson(new Map([['amount', 1]]))).not.toBe(canonicalJson(new Map([['amount', 2]])));
    expect(canonicalJson(new Map([['amount', 1]]))).not.toBe(canonicalJson(new Map([['total', 1]])));
    expect(canonicalJson(new Set(['a']))).not.toBe(canonicalJson(new Set(['b'])));
    expect(canonicalJson(new Set(['a']))).not.toBe(canonicalJson(new Set(['a', 'b'])));
    expect(canonicalJson(new Map([['a', new Set([1])]]))).not.toBe(canonicalJson(new Map([['a', new Set([2])]])));
  });

  it('nests them in each other and in JSON values, each level written as its own kind', () => {
    const value = {
      order: new Map<unknown, unknown>([
        ['lines', [new Set([3n, 1n]), { sku: 'b', qty: 2 }]],
        [new Set(['vip', 'eu']), new Map([['x', null]])],
      ]),
      total: 4n,
    };
    expect(canonicalJson(value)).toBe('{"order":Map{"lines":[Set[1n,3n],{"qty":2,"sku":"b"}],Set["eu","vip"]:Map{"x":null}},"total":4n}');
  });

  it("writes a Map's or a Set's own enumerable properties after its entries: a subclass's field tells two values apart", () => {
    class Basket extends Map<string, number> {
      constructor(
        public currency: string,
        entries: Array<[string, number]>,
      ) {
        super(entries);
      }
    }
    expect(canonicalJson(new Basket('EUR', [['sku-1', 2]]))).toBe('Map{"sku-1":2}{"currency":"EUR"}');
    expect(canonicalJson(new Basket('EUR', [['sku-1', 2]]))).not.toBe(canonicalJson(new Basket('USD', [['sku-1', 2]])));
    const tagged = (mode: string) => Object.assign(new Set(['x']), { mode, b: [1n] });
    expect(canonicalJson(tagged('refund'))).toBe('Set["x"]{"b":[1n],"mode":"refund"}');
    expect(canonicalJson(tagged('refund'))).not.toBe(canonicalJson(tagged('charge')));
    // What an object leaves out, a Map leaves out: without a property written, the form is a plain Map's.
    expect(canonicalJson(Object.assign(new Map([['a', 1]]), { skipped: undefined, f: () => 1 }))).toBe('Map{"a":1}');
    expect(canonicalJson(Object.assign(new Set(), { hidden: 1 }))).not.toBe(canonicalJson(new Set()));
    // Apart from a Map holding an object, or followed by one in a list.
    expect(canonicalJson(Object.assign(new Map(), { a: 1 }))).not.toBe(canonicalJson(new Map([['a', 1]])));
    expect(canonicalJson([Object.assign(new Map(), { a: 1 })])).not.toBe(canonicalJson([new Map(), { a: 1 }]));
  });

  it("counts a Map's own properties at the Map's level, as an object's members", () => {
    const withProperty = Object.assign(new Map(), { inner: [] });
    expect(canonicalJson(withProperty, 2)).toBe('Map{}{"inner":[]}');
    expect(() => canonicalJson(withProperty, 1)).toThrow(TooDeepError);
    expect(canonicalJson(new Map([['inner', []]]), 2)).toBe('Map{"inner":[]}');
    expect(() => canonicalJson(new Map([['inner', []]]), 1)).toThrow(TooDeepError);
    let deep: unknown = 0;
    for (let level = 0; level < 20_000; level++) deep = Object.assign(new Set(), { next: deep });
    expect(() => canonicalJson(deep)).toThrow(TooDeepError);
  });

  it('uses what a Map or a Set says its JSON form is, as for any object', () => {
    const described = Object.assign(new Map([['a', 1]]), { toJSON: () => ({ a: 1 }) });
    expect(canonicalJson(described)).toBe('{"a":1}');
  });

  it(`counts a Map or a Set as a level: ${MAX_CANONICAL_DEPTH} levels are written, deeper is TooDeepError, never a stack overflow`, () => {
    const nested = (levels: number, wrap: (inner: unknown, level: number) => unknown) => {
      let value: unknown = new Map();
      for (let level = 1; level < levels; level++) value = wrap(value, level);
      return value;
    };
    const maps = (levels: number) => nested(levels, (inner) => new Map([['n', inner]]));
    const sets = (levels: number) => nested(levels, (inner) => new Set([inner]));
    const keys = (levels: number) => nested(levels, (inner) => new Map([[inner, 0]]));
    const mixed = (levels: number) => nested(levels, (inner, level) => (level % 2 ? new Set([inner]) : [new Map([[1, inner]])]));

    expect(canonicalJson(maps(MAX_CANONICAL_DEPTH))).toBe(
      `${'Map{"n":'.repeat(MAX_CANONICAL_DEPTH - 1)}Map{}${'}'.repeat(MAX_CANONICAL_DEPTH - 1)}`,
    );
    expect(canonicalJson(sets(MAX_CANONICAL_DEPTH))).toBe(
      `${'Set['.repeat(MAX_CANONICAL_DEPTH - 1)}Map{}${']'.repeat(MAX_CANONICAL_DEPTH - 1)}`,
    );
    expect(canonicalJson(keys(MAX_CANONICAL_DEPTH))).toMatch(/^(Map\{)+\}(:0\})+$/);
    for (const build of [maps, sets, keys]) {
      expect(() => canonicalJson(build(MAX_CANONICAL_DEPTH + 1))).toThrow(TooDeepError);
      expect(() => canonicalJson(build(20_000))).toThrow(TooDeepError);
    }
    expect(() => canonicalJson(mixed(20_000))).toThrow(TooDeepError);
    // A Map in an array in an object: three levels.
    expect(canonicalJson({ a: [new Map()] }, 3)).toBe('{"a":[Map{}]}');
    expect(() => canonicalJson({ a: [new Map()] }, 2)).toThrow(TooDeepError);
  });
});
