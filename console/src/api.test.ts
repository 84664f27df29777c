import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { startConsole, type RunningConsole } from './console-server';
import type { Snapshot } from './snapshot';

// A console starts three services and a Redis or two: a loaded machine needs room.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const NO_FAULTS = { slowFirstAttempt: false, lostReplies: [], paymentsCrash: false, storeDown: false };

let running: RunningConsole;

beforeAll(async () => {
  running = await startConsole({ port: 0 });
});

afterAll(async () => {
  await running?.close();
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${running.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Read the event stream until a snapshot satisfies `wanted`; every snapshot seen, in order. */
async function snapshotsUntil(stream: ReadableStreamDefaultReader<Uint8Array>, wanted: (s: Snapshot) => boolean): Promise<Snapshot[]> {
  const seen: Snapshot[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await stream.read();
    if (done) throw new Error(`the stream ended after ${seen.length} snapshot(s)`);
    buffer += decoder.decode(value, { stream: true });
    const messages = buffer.split('\n\n');
    buffer = messages.pop() ?? '';
    for (const message of messages) {
      const data = message.split('\n').find((line) => line.startsWith('data: '));
      if (!message.includes('event: snapshot') || !data) continue;
      seen.push(JSON.parse(data.slice('data: '.length)) as Snapshot);
      if (wanted(seen[seen.length - 1]!)) return seen;
    }
  }
}

/** Whatever holds a port: `host` header sent as given (fetch would not let it be set). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('the console over HTTP', () => {
  it('serves the page and its scripts, each allowed to load only the page’s own files', async () => {
    const page = await fetch(`${running.url}/`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<h1>Idempotency lab console</h1>');
    for (const file of ['/console.js', '/diagram.js'])
      expect((await fetch(`${running.url}${file}`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await fetch(`${running.url}/console.css`)).headers.get('content-type')).toMatch(/^text\/css/);
    expect((await fetch(`${running.url}/snapshot.ts`)).status).toBe(404);
    expect((await fetch(`${running.url}/..%2Fpackage.json`)).status).toBe(404);
  });

  it('pushes the whole state when a page connects, then again when it changes', async () => {
    const abort = new AbortController();
    const response = await fetch(`${running.url}/api/events`, { signal: abort.signal });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const stream = response.body!.getReader();
    try {
      const [first] = await snapshotsUntil(stream, () => true);
      expect(Object.keys(first!.labs)).toEqual(['none', 'per-attempt', 'propagated', 'fingerprint']);
      await running.started;
      expect((await post('/api/labs', { policy: 'fingerprint' })).status).toBe(202);
      const seen = await snapshotsUntil(stream, (s) => s.labs.fingerprint.state === 'ready');
      expect(seen.map((s) => s.labs.fingerprint.state)).toContain('starting');
    } finally {
      abort.abort();
    }
  });

  it('refuses what it cannot do, with a problem document: a malformed body 400, "press again" before any Pay 409', async () => {
    await running.started;
    const again = await post('/api/checkouts', { mode: 'again', faults: NO_FAULTS });
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await again.json()) as { detail: string }).detail).toMatch(/press Pay first/);
    const malformed = [
      { mode: 'pay', faults: NO_FAULTS },
      { mode: 'pay', policy: 'sometimes', faults: NO_FAULTS },
      { mode: 'double-click', policy: 'none', clicks: 500, faults: NO_FAULTS },
      { mode: 'pay', policy: 'none', faults: { ...NO_FAULTS, lostReplies: ['bank'] } },
    ];
    for (const body of malformed) expect({ body, status: (await post('/api/checkouts', body)).status }).toEqual({ body, status: 400 });
    expect((await post('/api/labs', { policy: 'all' })).status).toBe(400);
  });

  it('answers only to local names, so a page from elsewhere (DNS rebinding) cannot drive it', async () => {
    const port = new URL(running.url).port;
    expect(await getWithHost(`${running.url}/api/state`, `localhost:${port}`)).toBe(200);
    expect(await getWithHost(`${running.url}/api/state`, `attacker.example:${port}`)).toBe(421);
  });
});

describe('a taken port', () => {
  let holder: Server;
  let port: number;

  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
  });

  it('fails before anything is started', async () => {
    await expect(startConsole({ port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('is said plainly by `npm run lab`, with the way out', async () => {
    const child = spawn(process.execPath, [join(__dirname, '..', 'dist', 'main.js')], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toContain(`Port ${port} is taken: another program already listens on 127.0.0.1:${port}.`);
    expect(stderr).toContain(`PORT=${port + 1} npm run lab`);
  });
});
