import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Headers that belong to one connection, never forwarded by a proxy (RFC 9110 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
}

/** One forwarded request: which target got it and how it ended. */
export interface ProxiedRequest {
  method: string;
  path: string;
  target: string;
  /** The upstream's status, or undefined when it closed without an answer. */
  status?: number;
  at: number;
}

/**
 * A load balancer in a few lines: a loopback HTTP server that sends each
 * request to the next target in turn, method, headers and body as they came,
 * and pipes the answer back. When a target closes the connection without
 * answering, the proxy resets the caller's connection too, so the caller sees
 * what it would see talking to the target directly: no answer, a reset.
 */
export class RoundRobinProxy {
  readonly requests: ProxiedRequest[] = [];
  private next = 0;
  private readonly sockets = new Set<Socket>();
  // No pooled upstream connections: each request gets its own, so one dropped
  // by a target never takes another request down with it.
  private readonly agent = new Agent({ keepAlive: false });

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly targets: readonly string[],
  ) {}

  /** Listen on `127.0.0.1:port` and balance over `targets` (base URLs), first one first. */
  static async start(port: number, targets: string[]): Promise<RoundRobinProxy> {
    if (targets.length === 0) throw new Error('a round-robin proxy needs at least one target');
    const server = createServer((req, res) => proxy.forward(req, res));
    const proxy = new RoundRobinProxy(server, port, targets);
    server.on('connection', (socket) => {
      proxy.sockets.add(socket);
      socket.once('close', () => proxy.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** How many requests each target got. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = Object.fromEntries(this.targets.map((t) => [t, 0]));
    for (const r of this.requests) counts[r.target] = (counts[r.target] ?? 0) + 1;
    return counts;
  }

  /** Stop listening and drop every connection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const target = this.targets[this.next++ % this.targets.length]!;
    const entry: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', target, at: Date.now() };
    this.requests.push(entry);
    const reset = () => req.socket.destroy();
    const upstream = request(
      new URL(req.url ?? '/', target),
      { method: req.method, headers: endToEnd(req.headers), agent: this.agent },
      (answer) => {
        entry.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
        answer.pipe(res);
        // The target died halfway through its answer: the caller must not take a truncated body for a whole one.
        answer.once('aborted', reset);
        answer.once('error', reset);
      },
    );
    // Closed (or refused) without an answer: reset the caller's connection, as the target did.
    upstream.once('error', reset);
    // The caller went away: so does the forwarded request.
    req.once('error', () => upstream.destroy());
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}
