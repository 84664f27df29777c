import { startConsole } from './console-server';

const DEFAULT_PORT = 8080;

function portFrom(text: string | undefined): number {
  if (text === undefined || text === '') return DEFAULT_PORT;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number (0-65535), not "${text}"`);
  return port;
}

async function main(): Promise<void> {
  const port = portFrom(process.env.PORT);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  let running;
  try {
    running = await startConsole({ port, log });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    process.stderr.write(
      `Port ${port} is taken: another program already listens on 127.0.0.1:${port}.\n` +
        `Stop it, or start the console on another port: PORT=${port === DEFAULT_PORT ? 8081 : port + 1} npm run lab\n`,
    );
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`Lab console: ${running.url}\n`);
  log('choosing a store and starting the services (the page shows their progress); Ctrl-C stops everything');
  const stop = (signal: NodeJS.Signals) => {
    log(`stopped by ${signal}: stopping the services and any Redis the console started`);
    void running.close().finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  // Exit now: the 'exit' hook kills every process the console started.
  process.exit(1);
});
