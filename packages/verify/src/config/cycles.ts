/** The parts of a hop that say where its proxy listens and where it forwards. */
interface HopAddresses {
  name: string;
  listen: string;
  upstream: string;
}

/** One hop that forwards, directly or through other hops, to its own proxy. */
export interface HopCycle {
  /** Index of the hop whose `upstream` closes the cycle. */
  index: number;
  message: string;
}

/**
 * The first cycle among the hops: a hop whose `upstream` is its own `listen` address
 * (a typo), or a ring of hops each forwarding to the next one's proxy. Either makes
 * one press an endless stream of requests, each holding a connection and a buffer.
 */
export function findCycle(hops: readonly HopAddresses[]): HopCycle | undefined {
  // Each hop forwards to at most one address: following the edges from each hop finds any ring.
  const next = hops.map((hop) => hops.findIndex((other) => sameAddress(hop.upstream, other.listen)));
  for (let start = 0; start < hops.length; start++) {
    const path = [start];
    for (let at = next[start] ?? -1; at !== -1 && path.length <= hops.length; at = next[at] ?? -1) {
      if (at === start) return { index: path.at(-1) ?? start, message: describe(hops, path) };
      if (path.includes(at)) break;
      path.push(at);
    }
  }
  return undefined;
}

function describe(hops: readonly HopAddresses[], path: number[]): string {
  const [first] = path as [number];
  const hop = hops[first] as HopAddresses;
  if (path.length === 1) {
    return `forwards to its own proxy (${hop.listen}): every request would come back to it without end; set the address of the service behind ${hop.name}`;
  }
  const ring = [...path, first].map((i) => hops[i]?.name).join(' -> ');
  return `the hops forward in a cycle (${ring}): every request would go round without end; set each upstream to the service behind its hop`;
}

/** Host names that reach this machine, as a proxy listening on any of them is reached by the others. */
const LOCAL = new Set(['localhost', '127.0.0.1', '0.0.0.0', '::1', '[::1]', '::', '[::]']);

/** True when the URL `upstream` reaches the proxy listening on `listen` ("host:port" or "port"). */
function sameAddress(upstream: string, listen: string): boolean {
  if (!URL.canParse(upstream)) return false;
  const url = new URL(upstream);
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  const [host, listenPort] = listen.includes(':') ? listen.split(':') : ['127.0.0.1', listen];
  if (port !== listenPort || listenPort === '0') return false;
  return url.hostname === host || (LOCAL.has(url.hostname) && LOCAL.has(host ?? ''));
}
