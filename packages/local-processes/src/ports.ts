import { createServer, type Server } from 'node:net';

function listenOnAnyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/**
 * `count` distinct loopback ports nobody listens on right now, chosen by
 * the kernel. They are held open together while they are picked, so no two
 * of them are the same; the kernel hands out ephemeral ports away from the
 * fixed ones a lab started by hand uses (3000-3002).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i += 1) servers.push(await listenOnAnyPort());
    return servers.map(portOf);
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

/** One loopback port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** True when `text` (a child's stderr: Node's or redis-server's) says its port was taken between our pick and its bind. */
export function portTaken(text: string): boolean {
  return /EADDRINUSE|Address already in use/.test(text);
}
