import Fastify from 'fastify';
import { registerApi } from './api';
import { EventStream } from './event-stream';
import { LabConsole } from './lab-console';
import { servePage } from './page-files';

/** Where the console listens. */
export interface ConsoleOptions {
  /** 0 for any free port. */
  port: number;
  /** Loopback by default: the console starts and stops processes for whoever reaches it. */
  host?: string;
  /** Progress lines (the store chosen, services ready, a service restarted). */
  log?: (line: string) => void;
}

/** A console that listens. */
export interface RunningConsole {
  url: string;
  /** Resolves once the store is chosen and the first policy's services answer. */
  started: Promise<void>;
  /** Stop the page's streams, the server, every lab and any store the console started. */
  close(): Promise<void>;
}

/** Names this server answers to: a page loaded under any other name (DNS rebinding) gets nothing. */
const LOCAL_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Listen first (a taken port fails here, before anything is started), then
 * choose the store and start the first policy's services in the background:
 * the page shows them starting.
 */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const log = options.log ?? (() => undefined);
  const host = options.host ?? '127.0.0.1';
  const lab = new LabConsole(log);
  const events = new EventStream(() => lab.snapshot());
  lab.onChange(() => events.changed());

  const app = Fastify({ logger: false });
  app.addHook('onRequest', async (request, reply) => {
    const name = (request.headers.host ?? '').replace(/:\d+$/, '');
    if (!LOCAL_NAMES.has(name) && name !== host) await reply.status(421).send({ title: 'Misdirected request', status: 421 });
  });
  servePage(app);
  registerApi(app, lab, events);
  await app.listen({ port: options.port, host });

  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const started = lab.start();
  started.catch((error: Error) => log(`the console could not start the lab: ${error.message}`));
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    started,
    close: async () => {
      events.close();
      await app.close();
      await started.catch(() => undefined);
      await lab.close();
    },
  };
}
