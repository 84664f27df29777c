import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('refuses to start while something already answers its health URL, rather than verify that instead', async () => {
    const port = await freePort();
    const squatter = createServer((_q, s) => s.end('ok')).listen(port, '127.0.0.1');
    await once(squatter, 'listening');
    // Would stay up without ever binding the port: only the squatter could make it healthy.
    const service = new ServiceProcess(
      'svc',
      config([process.execPath, '-e', 'setInterval(() => {}, 1000)'], `http://127.0.0.1:${port}/health`),
    );
    try {
      await expect(service.start()).rejects.toThrow(`service svc: http://127.0.0.1:${port}/health answers before the service was started`);
    } finally {
      await service.stop();
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  describe('whose started process is not the service itself, as with `docker run`', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'verify-service-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    /**
     * A shell that starts the server in the background and waits for it: a signal to
     * the shell leaves the server running, as one to `docker run` leaves the container.
     * The server's pid is in a file, as a container's name is known to `docker kill`.
     */
    const wrapped = (port: number, prefix = '') => {
      const pid = join(dir, 'server.pid');
      const script = `require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`;
      const signal = (name: string) => ['sh', '-c', `kill -${name} "$(cat '${pid}')"`];
      return {
        start: ['sh', '-c', `${prefix}'${process.execPath}' -e "${script}" & echo $! > '${pid}'; wait`],
        env: {},
        health: `http://127.0.0.1:${port}/health`,
        startTimeoutMs: 20_000,
        kill: signal('KILL'),
        stop: signal('TERM'),
      };
    };

    it('crashes it with its kill command, starts it again, and stops it with its stop command', async () => {
      const port = await freePort();
      const service = new ServiceProcess('svc', wrapped(port));
      try {
        await service.start();
        expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
        await service.kill();
        await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
        await service.start();
        expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
        await service.stop();
        await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
      } finally {
        // Whatever happened above, no server is left behind.
        spawnSync('sh', ['-c', `kill -KILL "$(cat '${join(dir, 'server.pid')}')" 2>/dev/null`]);
      }
    });

    it('kills what the start command started with it, without a kill command: its whole process group', async () => {
      const port = await freePort();
      // No kill command: SIGKILL goes to the shell's group, as it would to `npm start`'s, and the server dies with it.
      const { kill: _kill, stop: _stop, ...withoutKill } = wrapped(port);
      const service = new ServiceProcess('svc', withoutKill);
      try {
        await service.start();
        await service.kill();
        await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
        await service.start();
        await service.stop();
        await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
      } finally {
        spawnSync('sh', ['-c', `kill -KILL "$(cat '${join(dir, 'server.pid')}')" 2>/dev/null`]);
      }
    });

    it('fails a kill whose signal reached only the started process while the service still answers', async () => {
      const port = await freePort();
      // No kill command, and the server in a session of its own (setsid), as a container is
      // outside `docker run`'s group: the SIGKILL reaches only the shell, and the server lives on.
      const { kill: _kill, ...withoutKill } = wrapped(port, 'setsid ');
      const service = new ServiceProcess('svc', withoutKill);
      try {
        await service.start();
        await expect(service.kill()).rejects.toThrow(`service svc still answers http://127.0.0.1:${port}/health after it was killed`);
      } finally {
        spawnSync('sh', ['-c', `kill -KILL "$(cat '${join(dir, 'server.pid')}')" 2>/dev/null`]);
      }
    });

    it('names the service and the command when its kill command fails', async () => {
      const port = await freePort();
      const service = new ServiceProcess('svc', { ...wrapped(port), kill: [process.execPath, '-e', 'process.exit(4)'] });
      try {
        await service.start();
        await expect(service.kill()).rejects.toThrow(/^service svc: its kill command failed: Command failed: /);
      } finally {
        await service.stop();
      }
    });
  });
});
