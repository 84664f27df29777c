import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HeaderName, parseIdempotencyKey } from '@idempotency-chain/idempotency';
import type { AttemptEvent } from './attempt-event';
import { IdempotentHttpClient } from './client';
import type { IdempotentClientOptions } from './client-options';

/** A request as the downstream server saw it, body read in full. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed `Idempotency-Key`, if one was sent. */
  key?: string;
  /** `request-attempt` as a number. */
  attempt?: number;
  /** `request-timeout-ms` as a number. */
  timeoutMs?: number;
  body: string;
}

/** What the server does with a request. */
export type Reply =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  /** Read the body (the work is done), then destroy the socket: the reply is lost. */
  | { drop: true }
  /** Never answer. */
  | { hang: true }
  /** Answer 200 with `bytes` of body, written as the client reads it; `announce` sends its content-length. */
  | { stream: number; announce?: boolean };

/** Decides the reply to the `index`-th request (0-based). */
export type Script = (request: SeenRequest, index: number) => Reply;

/** Reply shorthand that keeps header maps well typed in ternaries. */
export const reply = (status: number, headers: Record<string, string> = {}, body?: unknown): Reply => ({ status, headers, body });

/** A real `node:http` server on an ephemeral port, with faults injected by a script. */
export class FaultServer {
  readonly seen: SeenRequest[] = [];
  /** Body bytes the `stream` replies handed to their sockets: what the client could have read. */
  streamed = 0;
  private readonly waiters = new Set<{ count: number; resolve: () => void }>();
  private server!: Server;
  url = '';

  private constructor(private readonly script: Script) {}

  static async start(script: Script): Promise<FaultServer> {
    const fault = new FaultServer(script);
    fault.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const seen = fault.record(req.method ?? '', req.url ?? '', req.headers, Buffer.concat(chunks).toString());
        const reply = fault.script(seen, fault.seen.length - 1);
        if ('drop' in reply) return void req.socket.destroy();
        if ('hang' in reply) return;
        if ('stream' in reply) return fault.stream(res, reply.stream, reply.announce === true);
        const json = reply.body !== undefined && typeof reply.body !== 'string';
        res.writeHead(reply.status, { ...(json && { 'content-type': 'application/json' }), ...reply.headers });
        res.end(json ? JSON.stringify(reply.body) : ((reply.body as string | undefined) ?? ''));
      });
    });
    await new Promise<void>((resolve) => fault.server.listen(0, '127.0.0.1', resolve));
    fault.url = `http://127.0.0.1:${(fault.server.address() as AddressInfo).port}`;
    return fault;
  }

  /** Resolves once `count` requests have arrived in full. Waits on events, never on a clock. */
  received(count: number): Promise<void> {
    if (this.seen.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.add({ count, resolve }));
  }

  /** The keys seen, in arrival order. */
  keys(): Array<string | undefined> {
    return this.seen.map((request) => request.key);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  // Write only when the socket drains, as a real server does, so what is
  // handed over is what the client read plus what the socket buffers hold.
  private stream(res: ServerResponse, bytes: number, announce: boolean): void {
    const chunk = Buffer.alloc(64 * 1024, 'x');
    res.writeHead(200, { 'content-type': 'text/plain', ...(announce && { 'content-length': String(bytes) }) });
    let left = bytes;
    const pump = (): void => {
      while (left > 0 && !res.destroyed) {
        const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= piece.length;
        this.streamed += piece.length;
        if (!res.write(piece)) return void res.once('drain', pump);
      }
      if (left === 0) res.end();
    };
    pump();
  }

  private record(method: string, path: string, headers: IncomingHttpHeaders, body: string): SeenRequest {
    const rawKey = headers[HeaderName.IdempotencyKey];
    const seen: SeenRequest = {
      method,
      path,
      headers,
      body,
      ...(rawKey !== undefined && { key: parseIdempotencyKey(rawKey) }),
      ...(headers[HeaderName.RequestAttempt] !== undefined && { attempt: Number(headers[HeaderName.RequestAttempt]) }),
      ...(headers[HeaderName.RequestTimeout] !== undefined && { timeoutMs: Number(headers[HeaderName.RequestTimeout]) }),
    };
    this.seen.push(seen);
    for (const waiter of this.waiters) {
      if (this.seen.length >= waiter.count) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
    return seen;
  }
}

/** Collects attempt events and lets a test wait for the n-th one. */
export class AttemptLog {
  readonly events: AttemptEvent[] = [];
  private readonly waiters = new Set<{ count: number; resolve: () => void }>();

  readonly listener = (event: AttemptEvent): void => {
    this.events.push(event);
    for (const waiter of this.waiters) {
      if (this.events.length >= waiter.count) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  };

  reached(count: number): Promise<void> {
    if (this.events.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.add({ count, resolve }));
  }
}

/**
 * Everything the client waits on is faked; what the socket layer needs runs
 * for real: setImmediate, and nextTick and queueMicrotask (Vitest fakes those
 * two only when asked).
 */
export const FAKE_TIMERS: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'hrtime', 'performance'],
};

/**
 * Under fake timers, drive a call whose attempts end on their own (a status, a
 * dropped reply): let each attempt finish for real, then advance the fake clock
 * by exactly the wait the client announced, until the call settles.
 */
export async function settle<T>(call: Promise<T>, log: AttemptLog): Promise<T> {
  let settled = false;
  const done = call.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let n = 1; !settled; n++) {
    await Promise.race([log.reached(n), done]);
    const event = log.events[n - 1];
    if (settled || !event?.retried) break;
    await vi.advanceTimersByTimeAsync(event.waitMs ?? 0);
  }
  return call;
}

/** A fault server with a client pointed at it, and the client's attempt log. */
export interface ClientUnderTest {
  server: FaultServer;
  client: IdempotentHttpClient;
  log: AttemptLog;
}

/** Start a fault server running `script` and a client for it. */
export async function startClient(script: Script, options: Partial<IdempotentClientOptions> = {}): Promise<ClientUnderTest> {
  const server = await FaultServer.start(script);
  const log = new AttemptLog();
  const client = new IdempotentHttpClient({ baseUrl: server.url, onAttempt: log.listener, ...options });
  return { server, client, log };
}
