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
  /** Environment for one service, over `env` (e.g. a next hop behind a proxy). */
  perService?: Partial<Record<Service, Record<string, string>>>;
}

/**
 * A running lab: three separate Node processes talking real HTTP over
 * loopback, their JSON log lines collected as the timeline.
 */
export class Lab {
  readonly events: LabEvent[] = [];
  private readonly children = new Map<string, ChildProcess>();
  private readonly exits = new Map<string, Promise<void>>();
  /** Extra processes (replicas): name -> the service they run and their port. */
  private readonly replicas = new Map<string, { service: Service; port: number; env: Record<string, string> }>();

  constructor(private readonly settings: LabSettings) {}

  /** Where a service (or a replica, by name) listens. */
  url(name: Service | string): string {
    const port = this.replicas.get(name)?.port ?? this.settings.ports[name as Service];
    return `http://127.0.0.1:${port}`;
  }

  /** Start the three services; resolve once each answers `/health`. */
  async start(): Promise<void> {
    await Promise.all(SERVICES.map((service) => this.startService(service)));
  }

  /** Start one more process of `service` under `name`, e.g. a second payments replica. */
  async startReplica(name: string, service: Service, port: number, env: Record<string, string> = {}): Promise<void> {
    this.replicas.set(name, { service, port, env });
    await this.startService(name);
  }

  async startService(name: Service | string): Promise<void> {
    const { ports, env } = this.settings;
    const replica = this.replicas.get(name);
    const service = replica?.service ?? (name as Service);
    const child = spawn(process.execPath, [require.resolve(`@idempotency-chain/${service}/dist/main.js`)], {
      env: {
        ...process.env,
        ...env,
        PORT: String(replica?.port ?? ports[service]),
        ORDERS_URL: this.url('orders'),
        PAYMENTS_URL: this.url('payments'),
        LAB_FAULTS: '1',
        ...this.settings.perService?.[service],
        ...replica?.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.set(name, child);
    createInterface({ input: child.stdout! }).on('line', (line) => this.collect(service, line));
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) => reject(new Error(`${name} exited (${signal ?? code}): ${stderr.trim()}`))),
    );
    this.exits.set(name, exited.catch(() => undefined));
    await Promise.race([this.waitHealthy(name), exited]);
  }

  /** Resolves when `service` has exited (a crash the lab injected, or a stop). */
  exited(name: Service | string): Promise<void> {
    return this.exits.get(name) ?? Promise.resolve();
  }

  /** Start a service again after it exited, as a process supervisor would. */
  async restart(name: Service | string): Promise<void> {
    await this.exited(name);
    await this.startService(name);
  }

  /** The service's Prometheus text. */
  async metrics(name: Service | string): Promise<string> {
    return (await fetch(`${this.url(name)}/metrics`)).text();
  }

  /** Arm a service's fault hooks for the next checkout. */
  async arm(name: Service | string, plan: Record<string, number>): Promise<void> {
    const response = await fetch(`${this.url(name)}/lab/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(plan),
    });
    if (response.status !== 204) throw new Error(`arming ${name} failed: ${response.status}`);
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

  private async waitHealthy(name: Service | string): Promise<void> {
    for (;;) {
      try {
        const response = await fetch(`${this.url(name)}/health`);
        if (response.ok) return;
      } catch {
        // Not listening yet.
      }
      await sleep(50);
    }
  }
}
