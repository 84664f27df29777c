import type { BodyTooLarge } from './bounded-body';
import { IdempotentHttpClient } from './client';
import { DEFAULT_MAX_RESPONSE_BYTES } from './client-options';
import { isHttpCallError, ResponseTooLargeError } from './errors';
import { startClient, type ClientUnderTest } from './fault-server.test-support';

const MiB = 1024 * 1024;

// A real server streams a body far past the cap, writing only as the client
// reads: what it managed to hand over is what the client took in.
describe('IdempotentHttpClient: response bodies are capped', () => {
  let under: ClientUnderTest | undefined;
  afterEach(async () => {
    await under?.client.close();
    await under?.server.close();
    under = undefined;
  });

  it('cuts a 200 MiB body off at the cap: a clear error, the stream destroyed, little of it read', async () => {
    under = await startClient(() => ({ stream: 200 * MiB }), { maxResponseBytes: 1 * MiB });
    const error = (await under.client.get('/export').catch((e: unknown) => e)) as ResponseTooLargeError;

    expect(isHttpCallError(error, ResponseTooLargeError)).toBe(true);
    expect(error).toMatchObject({ limit: 'response-size', maxBytes: 1 * MiB, attempts: 1, lastStatus: 200, lastOutcome: 'too-large' });
    expect(error.message).toMatch(/over 1048576 bytes/);
    // Held in memory: the cap and the one chunk that crossed it.
    expect((error.cause as BodyTooLarge).bytesRead).toBeLessThanOrEqual(1 * MiB + 64 * 1024);
    // Handed over by the server: that, and what the kernel's socket buffers took in between (a few MiB
    // measured; tcp_rmem's and tcp_wmem's maxima at worst), never the rest: the stream was destroyed.
    expect(under.server.streamed).toBeLessThan(100 * MiB);
    expect(under.server.seen).toHaveLength(1); // an answer is not retried: it would come back as large
    expect(under.log.events).toMatchObject([{ outcome: 'too-large', status: 200, retried: false }]);
  });

  it('refuses a body whose content-length is over the cap before reading any of it', async () => {
    under = await startClient(() => ({ stream: 200 * MiB, announce: true }), { maxResponseBytes: 1 * MiB });
    const error = await under.client.get('/export').catch((e: unknown) => e);
    expect(isHttpCallError(error, ResponseTooLargeError)).toBe(true);
    expect(((error as ResponseTooLargeError).cause as BodyTooLarge).bytesRead).toBe(0);
    expect(under.server.streamed).toBeLessThan(100 * MiB);
  });

  it('reads a body up to the cap, byte for byte, by default 4 MiB', async () => {
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(4 * MiB);
    under = await startClient(() => ({ stream: DEFAULT_MAX_RESPONSE_BYTES }));
    const response = await under.client.get<string>('/export');
    expect(response.body.length).toBe(DEFAULT_MAX_RESPONSE_BYTES);
  });

  it.each([0, -1, 1.5, Number.POSITIVE_INFINITY])('refuses maxResponseBytes %s', (maxResponseBytes) => {
    expect(() => new IdempotentHttpClient({ baseUrl: 'http://127.0.0.1:1', maxResponseBytes })).toThrow(/maxResponseBytes/);
  });
});
