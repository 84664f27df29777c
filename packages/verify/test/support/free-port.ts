import { once } from 'node:events';
import { createServer } from 'node:net';

/** A loopback port free right now: for a proxy or service that must be named before it starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
