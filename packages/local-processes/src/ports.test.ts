import { createServer } from 'node:net';
import { freePorts, portTaken } from './ports';

function listen(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

describe('free ports', () => {
  it('are distinct, away from the fixed lab ports, and free to listen on', async () => {
    const ports = await freePorts(6);
    expect(new Set(ports).size).toBe(6);
    for (const port of ports) expect(port).toBeGreaterThan(3102);
    await Promise.all(ports.map(listen));
  });

  it("recognise a port taken between the pick and the bind, in Node's words and in redis-server's", () => {
    expect(portTaken('Error: listen EADDRINUSE: address already in use 127.0.0.1:41234')).toBe(true);
    expect(portTaken('Could not create server TCP listening socket 127.0.0.1:41234: bind: Address already in use')).toBe(true);
    expect(portTaken('payments exited (1): ConfigError: PORT must be a number')).toBe(false);
  });
});
