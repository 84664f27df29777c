/** Largest seed: seeds are positive 31-bit integers, short enough to type back. */
const MAX_SEED = 2 ** 31 - 1;

/** 32-bit FNV-1a of `text`: turns a stream's name into a seed offset. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * A small, fast PRNG (mulberry32) whose whole sequence follows from its
 * seed: the same seed gives the same fault schedule on any machine, so a
 * failed soak is replayed with `CHAOS_SEED`. `fork` derives an independent
 * stream by name, so drawing more numbers in one part of the run (the
 * clients) never shifts another (the faults).
 */
export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** The next number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A number in [min, max). */
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return Math.floor(this.between(min, max + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One of `items`, each as likely. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** An independent stream named `label`, from the same seed. */
  fork(label: string): SeededRandom {
    return new SeededRandom((this.seed ^ fnv1a(label)) >>> 0);
  }
}

/** Thrown for a `CHAOS_SEED`, `CHAOS_SECONDS` or `CHAOS_STORES` the soak cannot run with. */
export class InvalidChaosSettingError extends Error {
  override name = 'InvalidChaosSettingError';
}

/** The run's seed: `CHAOS_SEED` when set (to replay a run), a fresh random one otherwise. */
export function chaosSeed(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 1 + Math.floor(Math.random() * (MAX_SEED - 1));
  const seed = Number(value);
  if (!Number.isInteger(seed) || seed < 1 || seed > MAX_SEED)
    throw new InvalidChaosSettingError(`CHAOS_SEED=${value} is not valid: expected an integer from 1 to ${MAX_SEED}`);
  return seed;
}
