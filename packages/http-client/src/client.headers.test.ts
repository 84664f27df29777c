import { startClient, type ClientUnderTest } from './fault-server.test-support';

// Real HTTP, real timers: the attempts are answered at once, nothing here waits on a clock.
describe("IdempotentHttpClient: the client's own headers", () => {
  let under: ClientUnderTest;
  afterEach(async () => {
    await under.client.close();
    await under.server.close();
  });

  it('sends them on every attempt of every call, whatever the case of their names', async () => {
    under = await startClient((_request, index) => (index === 0 ? { drop: true } : { status: 201, body: {} }), {
      headers: { Authorization: 'Bearer service-token' },
      backoff: { initialMs: 1, maxMs: 1 },
    });
    await under.client.post('/charges', { amountCents: 500 }, { key: 'k-1' });
    await under.client.get('/charges');
    expect(under.server.seen.map((request) => request.headers.authorization)).toEqual(Array(3).fill('Bearer service-token'));
  });

  it("lets a call's own header of the same name win", async () => {
    under = await startClient(() => ({ status: 200, body: {} }), { headers: { authorization: 'Bearer service-token' } });
    await under.client.get('/charges', { headers: { Authorization: 'Bearer other' } });
    expect(under.server.seen[0]?.headers.authorization).toBe('Bearer other');
  });
});
