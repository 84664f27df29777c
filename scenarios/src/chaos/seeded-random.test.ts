import { chaosSeed, InvalidChaosSettingError, SeededRandom } from './seeded-random';

describe('SeededRandom', () => {
  it('draws the same sequence from the same seed, and another from another seed', () => {
    const draw = (seed: number) =>
      Array.from({ length: 5 }, () => new SeededRandom(seed)).map((r, i) => Array.from({ length: i + 1 }, () => r.next()).pop());
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it('forks named streams that do not move each other', () => {
    const a = new SeededRandom(7);
    const faults = a.fork('faults');
    const first = faults.next();
    a.fork('users').next();
    expect(new SeededRandom(7).fork('faults').next()).toBe(first);
    expect(a.fork('users').next()).not.toBe(first);
  });

  it('keeps every draw in its range', () => {
    const random = new SeededRandom(1);
    for (let i = 0; i < 1000; i += 1) {
      const n = random.int(3, 5);
      expect(n >= 3 && n <= 5 && Number.isInteger(n)).toBe(true);
      expect(random.next()).toBeLessThan(1);
    }
  });
});

describe('chaosSeed', () => {
  it('takes CHAOS_SEED as it is, and makes up a valid one when unset', () => {
    expect(chaosSeed('123')).toBe(123);
    const fresh = chaosSeed(undefined);
    expect(Number.isInteger(fresh) && fresh >= 1).toBe(true);
  });

  it('refuses what is not a seed', () => {
    for (const bad of ['0', '-1', '1.5', 'abc', String(2 ** 31)]) expect(() => chaosSeed(bad)).toThrow(InvalidChaosSettingError);
  });
});
