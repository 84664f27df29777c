import type { ServerResponse } from 'node:http';

/** At most one snapshot per this many ms per page: a double-click of 20 changes the state hundreds of times. */
const EVERY_MS = 100;
/** A comment line this often keeps idle connections open through anything that times them out. */
const KEEPALIVE_MS = 15_000;

/**
 * Server-Sent Events: every page gets the whole snapshot when it connects
 * and again after changes, at most every `EVERY_MS`. Whole snapshots, not
 * deltas, so a page that reconnects (EventSource does it by itself) is
 * immediately right.
 */
export class EventStream {
  private readonly pages = new Set<ServerResponse>();
  private pending?: NodeJS.Timeout;
  private lastSent = 0;
  private readonly keepalive: NodeJS.Timeout;

  constructor(private readonly snapshot: () => unknown) {
    this.keepalive = setInterval(() => this.write(': keepalive\n\n'), KEEPALIVE_MS).unref();
  }

  /** Serve `response` as an event stream until the page goes away. */
  attach(response: ServerResponse): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-content-type-options': 'nosniff',
    });
    response.write('retry: 1000\n\n');
    this.pages.add(response);
    response.on('close', () => this.pages.delete(response));
    response.write(this.message());
  }

  /** Something changed: send a snapshot now, or as soon as the rate allows. */
  changed(): void {
    if (this.pending) return;
    const wait = Math.max(0, this.lastSent + EVERY_MS - Date.now());
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.lastSent = Date.now();
      if (this.pages.size > 0) this.write(this.message());
    }, wait);
  }

  /** End every stream (the server is closing). */
  close(): void {
    clearInterval(this.keepalive);
    clearTimeout(this.pending);
    for (const page of this.pages) page.end();
    this.pages.clear();
  }

  private message(): string {
    return `event: snapshot\ndata: ${JSON.stringify(this.snapshot())}\n\n`;
  }

  private write(text: string): void {
    for (const page of this.pages) page.write(text);
  }
}
