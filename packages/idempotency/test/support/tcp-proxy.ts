import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of a shared server (PostgreSQL, a Redis
 * Cluster node), for outage tests that must not stop the server other tests
 * use. `stop()` is what a client sees when its server dies: every open
 * connection is reset and new ones are refused, because nothing listens on
 * the port any more.
 */
export interface TcpProxy {
  readonly port: number;
  stop(): Promise<void>;
  /** Listen again on the same port after `stop()`: the server is back at the address its clients know. */
  start(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const listen = async (port: number) => {
    const server = createServer((client) => {
      track(client);
      const upstream = connect(target);
      track(upstream);
      client.pipe(upstream);
      upstream.pipe(client);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return server;
  };
  let server = await listen(0);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The proxy has no TCP port');
  let stopped: Promise<void> | undefined;
  return {
    port: address.port,
    stop() {
      stopped ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        const gone = [...sockets].map(closedOrResetRefused);
        for (const socket of sockets) cut(socket);
        await Promise.all([closed, ...gone]);
      })();
      return stopped;
    },
    async start() {
      if (!stopped) throw new Error('The proxy is running');
      await stopped;
      server = await listen(address.port);
      stopped = undefined;
    },
  };
}

/**
 * Cut a connection as a dying server does: with a reset. A socket already
 * closing (its peer ended, so the pipe or Node ended it too) is destroyed
 * instead: Node refuses to reset a socket whose shutdown is still pending
 * (EINVAL) and then never closes its handle, and a handle left open keeps
 * the process from exiting once the tests are over.
 */
function cut(socket: Socket): void {
  if (socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

/** Resolves once `socket` is closed; rejects if its reset is refused, which would leave it open. */
function closedOrResetRefused(socket: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('close', () => resolve());
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.syscall === 'reset') reject(error);
    });
  });
}
