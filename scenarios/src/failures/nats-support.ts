import { connect } from 'node:net';

/** The broker of the NATS scenario: `NATS_URL`, else a local NATS. */
export function natsUrl(): string {
  return process.env.NATS_URL || 'nats://127.0.0.1:4222';
}

/** Longest wait for NATS to take a connection before the scenario is reported unavailable. */
const PROBE_TIMEOUT_MS = 3000;

/** Why the NATS scenario cannot run here (nothing takes a connection at `NATS_URL`), or undefined when it can. */
export async function natsMissing(url = natsUrl()): Promise<string | undefined> {
  const { hostname, port } = new URL(url);
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 4222), timeout: PROBE_TIMEOUT_MS });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
  return reachable ? undefined : `NATS not reachable at ${hostname}:${port || 4222} (start one, e.g. \`nats-server -js\`, or set NATS_URL)`;
}
