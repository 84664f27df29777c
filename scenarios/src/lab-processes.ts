import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LabEvent } from './timeline';

/** The three services, outermost first. */
export const SERVICES = ['gateway', 'orders', 'payments'] as const;
export type Service = (typeof SERVICES)[number];

/** Where a lab's services listen. */
export interface LabPorts {
  gateway: number;
  orders: number;
  payments: number;
}

/** How to start one lab. */
export interface LabSettings {
  ports: LabPorts;
  /** Environment for every service (KEY_POLICY, IDEMPOTENCY_STORE, ...). */
  env: Record<string, string>;
}

/**
 * A running lab: three separate Node processes talking real HTTP over
 * loopback, their JSON log lines collected as the timeline.
 */
export class Lab {
  readonly events: LabEvent[] = [];
  private readonly children = new Map<Service, ChildProcess>();

  constructor(private readonly settings: LabSettings) {}

  url(service: Service): string {
    return `http://127.0.0.1:${this.settings.ports[service]}`;
  }

  /** Start the three services; resolve once each answers `/health`. */
  async start(): Promise<void> {
    await Promise.all(SERVICES.map((service) => this.startService(service)));
  }

  async startService(service: Service): Promise<void> {
    const { ports, env } = this.settings;
    const child = spawn(process.execPath, [require.resolve(`@idempotency-chain/${service}/dist/main.js`)], {
      env: {
        ...process.env,
        ...env,
        PORT: String(ports[service]),
        ORDERS_URL: this.url('orders'),
        PAYMENTS_URL: this.url('payments'),
        LAB_FAULTS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.set(service, child);
    createInterface({ input: child.stdout! }).on('line', (line) => this.collect(service, line));
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) => reject(new Error(`${service} exited (${signal ?? code}): ${stderr.trim()}`))),
    );
    await Promise.race([this.waitHealthy(service), exited]);
    exited.catch(() => undefined);
  }

  /** Arm a service's fault hooks for the next checkout. */
  async arm(service: Service, plan: Record<string, number>): Promise<void> {
    const response = await fetch(`${this.url(service)}/lab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(plan),
    });
    if (response.status !== 204) throw new Error(`arming ${service} failed: ${response.status}`);
  }

  /** Stop every service with SIGTERM (graceful shutdown) and wait for the exits. */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 5000).unref();
          }),
      ),
    );
    this.children.clear();
  }

  private collect(service: Service, line: string): void {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      this.events.push({ ...entry, service } as LabEvent);
    } catch {
      // Not a log line of ours (e.g. a stack trace): irrelevant to the timeline.
    }
  }

  private async waitHealthy(service: Service): Promise<void> {
    for (;;) {
      try {
        const response = await fetch(`${this.url(service)}/health`);
        if (response.ok) return;
      } catch {
        // Not listening yet.
      }
      await sleep(50);
    }
  }
}
