import { createRedisClient } from '@idempotency-chain/idempotency/redis';
import { Logger } from '@nestjs/common';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { freePort } from '@idempotency-chain/local-processes';
import { reportOutages } from './outages';

/** Captures what `reportOutages` logs. */
class RecordingLogger extends Logger {
  readonly lines: string[] = [];
  override warn(message: string): void {
    this.lines.push(`warn ${message}`);
  }
  override log(message: string): void {
    this.lines.push(`log ${message}`);
  }
}

describe('reportOutages', () => {
  it('logs one warning for an outage, however many reconnections fail, and one line once Redis answers again', async () => {
    const port = await freePort();
    const client = createRedisClient(`redis://127.0.0.1:${port}`);
    const logger = new RecordingLogger();
    reportOutages(client, 'ledger', logger);
    let errors = 0;
    client.on('error', () => (errors += 1));
    client.connect().catch(() => undefined); // it keeps reconnecting, with growing delays
    await new Promise<void>((resolve) => client.on('error', () => errors >= 3 && resolve()));
    expect(logger.lines).toEqual([
      `warn ledger: Redis does not answer (connect ECONNREFUSED 127.0.0.1:${port}); requests that need it answer 503 until it is back`,
    ]);

    const server = spawn(
      process.env.REDIS_SERVER ?? 'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        cwd: tmpdir(), // a stray file never lands in the repository
        stdio: 'ignore',
      },
    );
    try {
      await once(client, 'ready');
      expect(logger.lines).toEqual([expect.stringMatching(/^warn ledger: Redis does not answer/), 'log ledger: Redis answers again']);
    } finally {
      client.disconnect();
      server.kill('SIGKILL');
    }
  });
});
