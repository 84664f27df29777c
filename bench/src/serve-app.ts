import type { INestApplication } from '@nestjs/common';

/**
 * Serve a benchmark's child app: listen on 127.0.0.1 at `PORT` (any free
 * port by default), print `READY <port>` for the parent, and close the app
 * on SIGTERM, SIGINT or the parent going away.
 */
export async function serveForBenchmark(app: INestApplication): Promise<void> {
  await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  const address = (app.getHttpServer() as { address(): unknown }).address();
  const port = typeof address === 'object' && address ? (address as { port: number }).port : 0;
  announceReady(app, port);
}

/**
 * Print `READY <port>` for the parent of a child app already taking
 * requests (or messages), and close it on SIGTERM, SIGINT or the parent
 * going away.
 */
export function announceReady(app: { close(): Promise<unknown> }, port: number): void {
  process.stdout.write(`READY ${port}\n`);
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void app.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The benchmark going away must not leave this process behind.
  process.on('disconnect', stop);
}
