import { once } from 'node:events';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';

/** A tiny real HTTP service: answers 201 with how many requests it has received so far. */
export interface Upstream {
  url: string;
  /** Bodies received, in order. */
  received: string[];
  /** Emits `received` as a request arrives and `answered` once its answer is written. */
  events: EventEmitter;
  close(): Promise<void>;
}

export async function startUpstream(): Promise<Upstream> {
  const received: string[] = [];
  const events = new EventEmitter();
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = (await buffer(req)).toString();
    received.push(body);
    events.emit('received', body);
    res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
    res.end(JSON.stringify({ n: received.length, key: req.headers['idempotency-key'] ?? null }), () => events.emit('answered'));
  };
  // A caller that hangs up mid-body fails the read: nothing to answer.
  const server = createServer((req, res) => void answer(req, res).catch(() => res.destroy()));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    events,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
