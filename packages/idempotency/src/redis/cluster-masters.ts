import type { Cluster, Redis } from 'ioredis';

/** A master that does not serve its shard, and how many slots it holds (none known: 0). */
export interface SilentMaster {
  /** `host:port`. */
  address: string;
  slots: number;
}

/** The masters of a Cluster as a ping finds them. */
export interface ClusterMasters {
  /** The masters that answered a PING: their connections and their `host:port`. */
  answering: { node: Redis; address: string }[];
  /** The masters that do not serve their shard. */
  silent: SilentMaster[];
}

/**
 * The masters of `cluster`, those that answer and those that do not serve
 * their shard: those the client knows that do not answer a PING within
 * `PING_BOUND_MS` (each asked on its own connection, at once, so a shard
 * that is down costs one failed round trip, not the command timeout of a
 * key routed to it), and
 * those the Cluster itself has marked failed (`fail` or `fail?` in CLUSTER
 * NODES, asked of a master that answered: the client drops a node whose
 * connection ended, so its own list forgets a shard that is gone). A silent
 * master's slots are counted from CLUSTER NODES, or, for a user who may not
 * run it, from the client's slot map. Rejects with the first failure when
 * no master answers, or with a failure `isRefused` recognises (a login
 * refused is not a shard down).
 */
export async function clusterMasters(cluster: Cluster, isRefused: (error: unknown) => boolean): Promise<ClusterMasters> {
  const masters = cluster.nodes('master');
  const answers = await Promise.allSettled(masters.map((node) => pingWithin(node, PING_BOUND_MS)));
  const failures = answers.flatMap((answer) => (answer.status === 'rejected' ? [answer.reason as Error] : []));
  const refusal = failures.find(isRefused);
  if (refusal) throw refusal;
  if (masters.length > 0 && failures.length === masters.length) throw failures[0] as Error;
  const addressed = masters.map((node) => ({ node, address: `${node.options.host}:${node.options.port}` }));
  const answering = addressed.filter((_, i) => answers[i]?.status === 'fulfilled');
  const silent = new Set(addressed.filter((_, i) => answers[i]?.status === 'rejected').map(({ address }) => address));
  // A user without CLUSTER NODES (an ACL that grants only what the client needs) is judged by the PINGs alone.
  const nodes = String((answering[0] ? await answering[0].node.call('CLUSTER', 'NODES').catch(() => '') : '') ?? '');
  const slotsOf = new Map<string, number>();
  for (const line of nodes.split('\n')) {
    const [, address, flags, , , , , , ...slots] = line.trim().split(' ');
    if (!address || !flags) continue;
    const where = address.split('@')[0] ?? address;
    const flagged = flags.split(',');
    if (!flagged.includes('master')) continue;
    slotsOf.set(where, countSlots(slots));
    if (flagged.includes('fail') || flagged.includes('fail?')) silent.add(where);
  }
  return {
    answering,
    silent: [...silent].map((address) => ({ address, slots: slotsOf.get(address) ?? slotsServedBy(cluster, address).size })),
  };
}

/**
 * How long a master has to answer its PING: half the readiness probe's
 * default timeout (`IdempotencyHealthIndicator`, 1 s), so that a master
 * that hangs (paused, swapping) is named silent in a degraded answer
 * instead of the whole probe timing out as down. A loopback PING takes well
 * under a millisecond; a cross-zone one, a few.
 */
const PING_BOUND_MS = 500;

/** `node`'s PING, rejected when it takes longer than `ms`. */
async function pingWithin(node: Redis, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no PING answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([node.ping(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How many slots CLUSTER NODES lists for a node (`5461-10922`, `42`; a `[...]` slot in migration is not its own yet). */
function countSlots(ranges: string[]): number {
  let count = 0;
  for (const range of ranges) {
    if (range.startsWith('[')) continue;
    const [from, to = from] = range.split('-').map(Number);
    if (Number.isInteger(from) && Number.isInteger(to)) count += (to as number) - (from as number) + 1;
  }
  return count;
}

/** The slots the client's slot map gives to the master at `address`. */
export function slotsServedBy(cluster: Cluster, address: string): Set<number> {
  const slots = new Set<number>();
  cluster.slots.forEach((nodes, slot) => {
    if (nodes?.[0] === address) slots.add(slot);
  });
  return slots;
}
