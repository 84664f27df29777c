import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { keyHash, type Attempt } from './attempt';
import type { AttemptLog } from './attempt-log';
import { faultLabel, type Fault, type FaultPlan } from './faults';
import { forwardableHeaders } from './headers';

/** Where a fault proxy listens and what it forwards to. */
export interface FaultProxyOptions {
  /** Hop name, as reports show it. */
  name: string;
  /** Host and port to listen on; port 0 picks a free one. */
  host: string;
  port: number;
  /** Origin of the service behind this hop, e.g. `http://127.0.0.1:8102`. */
  upstream: string;
  /** Header the idempotency key travels in (case-insensitive). */
  keyHeader: string;
  /** Where every attempt is recorded. */
  log: AttemptLog;
  /** Longest the proxy waits for the upstream, so a stuck service cannot hang a run. */
  upstreamTimeoutMs?: number;
  /** Told as each attempt arrives (not its duplicates), before its faults are chosen. */
  onAttempt?: () => void;
  /** Requests served at once; past it, a 503 (default {@link MAX_IN_FLIGHT}). */
  maxInFlight?: number;
  /** Connections it holds at most (default {@link MAX_CONNECTIONS}); one past it is closed as it opens. */
  maxConnections?: number;
}

/**
 * Requests a proxy serves at once, and connections it holds. Far above what any
 * scenario sends (a double-click is at most 50 presses), far below what a service
 * calling its own hop's proxy reaches in a second: that loop ends in a clear 503
 * instead of growing until the machine runs out of memory or file descriptors.
 */
const MAX_IN_FLIGHT = 256;
const MAX_CONNECTIONS = 1024;

/**
 * An HTTP-aware fault proxy for one hop: Node's HTTP server on the caller's side, an
 * undici pool on the upstream's side, and between them the faults planned per attempt.
 * Requests and answers are buffered whole so that a lost reply is lost only after the
 * upstream finished its answer — the case where the work was done and nobody was told.
 */
export class FaultProxy {
  private readonly server: Server;
  private readonly upstream: Pool;
  private plan: FaultPlan = new Map();
  /** Attempts since the plan was set: the number reports show. */
  private attempts = 0;
  /** Attempts since the plan was set or last restarted: the number the plan is looked up by. */
  private planned = 0;
  private inFlight = 0;
  /** Attempts sent to the upstream and not yet answered: what a new one is concurrent with. */
  private readonly inUpstream = new Set<Attempt>();
  /** Attempts held for the caller's next attempt: each sends its request when released. */
  private held: HeldAttempt[] = [];

  constructor(private readonly options: FaultProxyOptions) {
    const timeout = options.upstreamTimeoutMs ?? 60_000;
    this.upstream = new Pool(options.upstream, { headersTimeout: timeout, bodyTimeout: timeout });
    this.server = createServer((req, res) => void this.handle(req, res));
    // A caller resetting its own connection is part of the game, not a proxy failure.
    this.server.on('clientError', (_error, socket) => socket.destroy());
    this.server.maxConnections = options.maxConnections ?? MAX_CONNECTIONS;
  }

  /** Starts listening; resolves with the port actually bound. */
  async start(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => resolve());
    });
    return (this.server.address() as AddressInfo).port;
  }

  /** Plans faults for the attempts to come and counts attempts from 1 again. */
  setPlan(plan: FaultPlan): void {
    this.plan = plan;
    this.attempts = 0;
    this.planned = 0;
  }

  /**
   * Applies the plan from its first attempt again, as for a new call: the next
   * attempt gets the faults of attempt 1. Reports still number attempts on.
   */
  restartPlan(): void {
    this.planned = 0;
  }

  /** Stops listening, drops open connections and closes the upstream pool. */
  async stop(): Promise<void> {
    for (const held of this.held.splice(0)) held.drop();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Destroyed, not closed: a request to a stuck service would hold the stop for its whole timeout.
    await this.upstream.destroy();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const max = this.options.maxInFlight ?? MAX_IN_FLIGHT;
    if (this.inFlight >= max) {
      req.resume();
      res.writeHead(503, { 'content-type': 'text/plain', connection: 'close' });
      res.end(`fault proxy ${this.options.name}: more than ${max} requests in flight; does a service call its own hop's proxy?\n`);
      return;
    }
    this.inFlight++;
    try {
      await this.attempt(req, res);
    } finally {
      this.inFlight--;
    }
  }

  private async attempt(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.options.onAttempt?.();
    const number = ++this.attempts;
    const faults = this.plan.get(++this.planned) ?? [];
    const attempt = this.begin(req, number, faults);
    try {
      await this.serve(req, res, attempt, faults);
    } catch {
      // The caller hung up mid-body (or a crash hook failed): end the attempt so the
      // chain can still settle, and never let one request take the proxy down.
      if (attempt.outcome === 'in-flight') this.options.log.end(attempt, 'caller-gone', attempt.status);
      req.socket.destroy();
    }
  }

  private async serve(req: IncomingMessage, res: ServerResponse, attempt: Attempt, faults: readonly Fault[]): Promise<void> {
    if (has(faults, 'reset')) {
      req.socket.resetAndDestroy();
      this.options.log.end(attempt, 'reset', null);
      return;
    }
    const body = await buffer(req);
    if (has(faults, 'unavailable')) {
      res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '0' });
      res.end(`fault proxy ${this.options.name}: unavailable (a planned fault)\n`);
      this.options.log.end(attempt, 'unavailable', 503);
      return;
    }
    const hold = find(faults, 'hold');
    if (hold) await sleep(hold.ms);
    const holdForRetry = find(faults, 'hold-for-retry');
    // Attempts held for this one go first, so that each is in the upstream when this one arrives there.
    if (!holdForRetry) for (const held of this.held.splice(0)) held.send();
    const forwarded = holdForRetry ? this.holdForRetry(req, body, attempt, holdForRetry.maxMs) : this.forward(req, body, attempt);
    // Sent after the original, in the same turn: the upstream has them at once.
    const copies = find(faults, 'duplicate')?.copies ?? 0;
    const duplicates = Array.from({ length: copies }, () => this.deliverCopy(req, body, attempt.attempt));
    const answer = await forwarded;
    await Promise.all(duplicates);
    if (!answer) {
      req.socket.resetAndDestroy();
      this.options.log.end(attempt, 'upstream-failed', null);
      return;
    }
    const latency = find(faults, 'latency');
    if (latency) await sleep(latency.ms);
    if (req.socket.destroyed) {
      this.options.log.end(attempt, 'caller-gone', answer.status);
    } else if (has(faults, 'lose-reply') || has(faults, 'kill')) {
      await find(faults, 'kill')?.crash();
      req.socket.resetAndDestroy();
      this.options.log.end(attempt, 'reply-lost', answer.status);
    } else {
      res.writeHead(answer.status, { ...answer.headers, 'content-length': answer.body.length });
      res.end(answer.body);
      this.options.log.end(attempt, 'answered', answer.status);
    }
  }

  /**
   * Resolves with the upstream's answer to a request sent only once the caller's next
   * attempt is about to be sent (or after `maxMs`, alone): released by that attempt,
   * in its own turn, so the two are in the upstream together.
   */
  private holdForRetry(req: IncomingMessage, body: Buffer, attempt: Attempt, maxMs: number): Promise<Answer | undefined> {
    return new Promise((resolve) => {
      const held: HeldAttempt = {
        send: () => {
          clearTimeout(timer);
          resolve(this.forward(req, body, attempt));
        },
        drop: () => {
          clearTimeout(timer);
          resolve(undefined);
        },
      };
      const timer = setTimeout(() => {
        this.held = this.held.filter((h) => h !== held);
        held.send();
      }, maxMs);
      this.held.push(held);
    });
  }

  private begin(req: IncomingMessage, number: number, faults: readonly Fault[], duplicateOf?: number): Attempt {
    const key = req.headers[this.options.keyHeader.toLowerCase()];
    return this.options.log.begin({
      hop: this.options.name,
      attempt: number,
      ...(duplicateOf === undefined ? {} : { duplicateOf }),
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      keyHash: keyHash(Array.isArray(key) ? key[0] : key),
      faults: faults.map(faultLabel),
    });
  }

  /** A copy counts as an attempt of its own, so the report shows what the upstream got. */
  private async deliverCopy(req: IncomingMessage, body: Buffer, original: number): Promise<void> {
    const copy = this.begin(req, ++this.attempts, [], original);
    const answer = await this.forward(req, body, copy);
    this.options.log.end(copy, answer ? 'caller-gone' : 'upstream-failed', answer?.status ?? null);
  }

  /** Sends the request at once (before the first `await`), noting what else the upstream has. */
  private async forward(req: IncomingMessage, body: Buffer, attempt: Attempt): Promise<Answer | undefined> {
    if (this.inUpstream.size > 0) attempt.concurrentWith = [...this.inUpstream].map((a) => a.attempt);
    this.inUpstream.add(attempt);
    try {
      const answer = await this.upstream.request({
        path: req.url ?? '/',
        method: req.method ?? 'GET',
        headers: forwardableHeaders(req.headers),
        body: body.length > 0 ? body : null,
      });
      return {
        status: answer.statusCode,
        headers: forwardableHeaders(answer.headers),
        body: Buffer.from(await answer.body.arrayBuffer()),
      };
    } catch {
      return undefined;
    } finally {
      this.inUpstream.delete(attempt);
    }
  }
}

/** An attempt waiting for the caller's next one. */
interface HeldAttempt {
  /** Sends its request to the upstream now. */
  send(): void;
  /** Gives up on it (the proxy stops): it ends as if the upstream failed. */
  drop(): void;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function find<K extends Fault['kind']>(faults: readonly Fault[], kind: K): Extract<Fault, { kind: K }> | undefined {
  return faults.find((f): f is Extract<Fault, { kind: K }> => f.kind === kind);
}

function has(faults: readonly Fault[], kind: Fault['kind']): boolean {
  return find(faults, kind) !== undefined;
}
