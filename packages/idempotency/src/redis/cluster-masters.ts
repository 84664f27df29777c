import type { Cluster } from 'ioredis';

/**
 * The masters of `cluster` that do not serve their shard, as `host:port`:
 * those the client knows that do not answer a PING (each asked on its own
 * connection, at once, so a shard that is down costs one failed round trip,
 * not the command timeout of a key routed to it), and those the Cluster
 * itself has marked failed (`fail` or `fail?` in CLUSTER NODES, asked of a
 * master that answered: the client drops a node whose connection ended, so
 * its own list forgets a shard that is gone). Rejects with the first
 * failure when no master answers, or with a failure `isRefused` recognises
 * (a login refused is not a shard down).
 */
export async function silentMasters(cluster: Cluster, isRefused: (error: unknown) => boolean): Promise<string[]> {
  const masters = cluster.nodes('master');
  const answers = await Promise.allSettled(masters.map((node) => node.ping()));
  const failures = answers.flatMap((answer) => (answer.status === 'rejected' ? [answer.reason as Error] : []));
  const refusal = failures.find(isRefused);
  if (refusal) throw refusal;
  if (masters.length > 0 && failures.length === masters.length) throw failures[0] as Error;
  const silent = masters.filter((_, i) => answers[i]?.status === 'rejected').map((node) => `${node.options.host}:${node.options.port}`);
  const answering = masters.find((_, i) => answers[i]?.status === 'fulfilled');
  // A user without CLUSTER NODES (an ACL that grants only what the client needs) is judged by the PINGs alone.
  const nodes = answering ? await answering.call('CLUSTER', 'NODES').catch(() => '') : '';
  for (const line of String(nodes).split('\n')) {
    const [, address, flags] = line.split(' ');
    if (!address || !flags) continue;
    const flagged = flags.split(',');
    const failed = flagged.includes('master') && (flagged.includes('fail') || flagged.includes('fail?'));
    const where = address.split('@')[0] ?? address;
    if (failed && !silent.includes(where)) silent.push(where);
  }
  return silent;
}
