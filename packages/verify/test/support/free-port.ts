import { once } from 'node:events';
import { createServer, type Server } from 'node:net';

/**
 * `count` distinct loopback ports free right now, for proxies and services that must be
 * named before they start. They are held open together while they are picked, so no two
 * are the same, and whoever binds them next binds them by number, never port 0: a port
 * the kernel hands out for port 0 could be one just picked here and released.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i += 1) {
      const server = createServer();
      servers.push(server);
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
    }
    return servers.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** One loopback port free right now. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** True when a process's output says a port was taken between the pick and the bind. */
export function portTaken(text: string): boolean {
  return /EADDRINUSE|Address already in use/.test(text);
}
