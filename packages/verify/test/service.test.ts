import { ServiceProcess } from '../src/run/service';
import { freePort } from './support/free-port';

describe('ServiceProcess', () => {
  const config = (start: string[], health: string) => ({ start, env: {}, health, startTimeoutMs: 20_000 });

  it('starts a service, waits for its health, kills it and starts it again', async () => {
    const port = await freePort();
    const script = `require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`;
    const service = new ServiceProcess('svc', config([process.execPath, '-e', script], `http://127.0.0.1:${port}/health`));
    try {
      await service.start();
      const first = await fetch(`http://127.0.0.1:${port}/`);
      expect(first.status).toBe(200);
      await service.kill();
      await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
      await service.start();
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
    } finally {
      await service.stop();
    }
  });

  it('fails when the service exits before it is healthy', async () => {
    const service = new ServiceProcess('svc', config([process.execPath, '-e', 'process.exit(3)'], 'http://127.0.0.1:1/'));
    await expect(service.start()).rejects.toThrow('service svc exited (3) before it was healthy');
  });
});
