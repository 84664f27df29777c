import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts, portTaken, track } from '@idempotency-chain/local-processes';
import { KEY_HASH_SECRET_ENV } from '@idempotency-chain/idempotency';
import type { LabEvent } from './timeline';

// One key-hash secret for every process of a lab and for the runner reading
// their logs (the services inherit this environment): their hashes correlate.
// At least 32 characters, as each app's configuration requires of it.
process.env[KEY_HASH_SECRET_ENV] ??= 'idempotency-chain-lab-key-hash-secret';

/** The three services, outermost first. */
export const SERVICES = ['gateway', 'orders', 'payments'] as const;
export type Service = (typeof SERVICES)[number];

/** Where a lab's services listen. */
export interface LabPorts {
  gateway: number;
  orders: number;
  payments: number;
}

/** Bound on one service starting up on a loaded machine. */
const START_BOUND_MS = 60_000;

/** Three free loopback ports for one lab. */
async function freeLabPorts(): Promise<LabPorts> {
  const [gateway, orders, payments] = (await freePorts(3)) as [number, number, number];
  return { gateway, orders, payments };
}

/** The customers a lab's gateway knows by default: the accounts its scenarios pay from. */
const LAB_ACCOUNTS: readonly string[] = ['acct-42', 'acct-7'];

/**
 * Fresh credentials for one lab run: a key per customer account for the
 * gateway (`GATEWAY_API_KEYS`) and the service token of each inner hop
 * (`ORDERS_TOKEN`, `PAYMENTS_TOKEN`), as the services read them.
 */
function labCredentials(accounts: readonly string[]): { env: Record<string, string>; keys: Map<string, string> } {
  const token = (name: string) => `lab-${name}-${randomBytes(16).toString('hex')}`;
  const keys = new Map(accounts.map((account) => [account, token(account)]));
  return {
    keys,
    env: {
      GATEWAY_API_KEYS: JSON.stringify(Object.fromEntries([...keys].map(([account, key]) => [key, account]))),
      ORDERS_TOKEN: token('orders'),
      PAYMENTS_TOKEN: token('payments'),
    },
  };
}

/** How to start one lab. */
export interface LabSettings {
  /** Where its services listen; free ports picked at start when absent. */
  ports?: LabPorts;
  /** Environment for every service: its own (IDEMPOTENCY_STORE, ...) and the lab's (KEY_POLICY, LAB_NAIVE). */
  env: Record<string, string>;
  /** The customers' accounts its gateway gives keys to (default `LAB_ACCOUNTS`); see `Lab.authorization`. */
  accounts?: readonly string[];
  /** Environment for one service, over `env` (e.g. a next hop behind a proxy). */
  perService?: Partial<Record<Service, Record<string, string>>>;
  /** Told of every event as it is recorded, e.g. to show the timeline live. */
  onEvent?: (event: LabEvent) => void;
}

/**
 * A running lab: three separate Node processes, each a service started by
 * the lab's entry (`@idempotency-chain/lab/main`), talking real HTTP over
 * loopback, their JSON log lines collected as the timeline.
 */
export class Lab {
  readonly events: LabEvent[] = [];
  private readonly children = new Map<string, ChildProcess>();
  private readonly exits = new Map<string, Promise<void>>();
  private readonly closed = new Map<string, Promise<void>>();
  /** Extra processes (replicas): name -> the service they run and their port. */
  private readonly replicas = new Map<string, { service: Service; port: number; env: Record<string, string> }>();

  private ports?: LabPorts;
  /** Processes that have logged that they listen. */
  private readonly listening = new Set<string>();

  /** This run's credentials, fresh per lab. */
  private readonly credentials: ReturnType<typeof labCredentials>;

  constructor(private readonly settings: LabSettings) {
    this.ports = settings.ports;
    this.credentials = labCredentials(settings.accounts ?? LAB_ACCOUNTS);
  }

  /** The `Authorization` a customer presents to the gateway to pay from `account` (one of the lab's accounts). */
  authorization(account: string): string {
    const key = this.credentials.keys.get(account);
    if (key === undefined) throw new Error(`the lab has no key for ${account}: name it in LabSettings.accounts`);
    return `Bearer ${key}`;
  }

  /** The headers that read payments' ledger (`GET /charges`): orders' service token, which payments accepts. */
  ledgerHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.credentials.env.PAYMENTS_TOKEN}` };
  }

  /** Where a service (or a replica, by name) listens. */
  url(name: Service | string): string {
    const port = this.replicas.get(name)?.port ?? this.portsInUse()[name as Service];
    return `http://127.0.0.1:${port}`;
  }

  /**
   * Start the three services; resolve once each answers `/health`. On free
   * ports of its own unless told which: another process may take one of them
   * between the pick and the bind, and then the lab starts again on new ones.
   */
  async start(): Promise<void> {
    for (let tries = 1; ; tries += 1) {
      this.ports = this.settings.ports ?? (await freeLabPorts());
      try {
        await Promise.all(SERVICES.map((service) => this.startService(service)));
        return;
      } catch (error) {
        await this.stop();
        if (this.settings.ports || tries >= 3 || !portTaken((error as Error).message)) throw error;
      }
    }
  }

  /** Start one more process of `service` under `name`, e.g. a second payments replica. */
  async startReplica(name: string, service: Service, port: number, env: Record<string, string> = {}): Promise<void> {
    this.replicas.set(name, { service, port, env });
    await this.startService(name);
  }

  async startService(name: Service | string): Promise<void> {
    const { env } = this.settings;
    const ports = this.portsInUse();
    const replica = this.replicas.get(name);
    const service = replica?.service ?? (name as Service);
    // The service's own module, through the lab's entry: fault points, naive variants and key policies applied from outside.
    const child = spawn(process.execPath, [require.resolve('@idempotency-chain/lab/main'), service], {
      env: {
        ...process.env,
        ...this.credentials.env,
        ...env,
        PORT: String(replica?.port ?? ports[service]),
        ORDERS_URL: this.url('orders'),
        PAYMENTS_URL: this.url('payments'),
        ...this.settings.perService?.[service],
        ...replica?.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    track(child);
    this.children.set(name, child);
    // 'close' comes after the exit and after the last line of output: the timeline is complete by then.
    this.closed.set(name, new Promise<void>((resolve) => child.once('close', () => resolve())));
    this.listening.delete(name);
    createInterface({ input: child.stdout }).on('line', (line) => this.collect(name, service, line));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) => reject(new Error(`${name} exited (${signal ?? code}): ${stderr.trim()}`))),
    );
    this.exits.set(
      name,
      exited.catch(() => undefined),
    );
    await Promise.race([this.waitHealthy(name, child), exited]);
  }

  /** Add an event to the timeline (a service's log line, or what a caller saw) and tell `onEvent`. */
  record(event: LabEvent): void {
    this.events.push(event);
    this.settings.onEvent?.(event);
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

  /** True while the process of `name` runs (it may not answer yet: see `start`). */
  running(name: Service | string): boolean {
    const child = this.children.get(name);
    return Boolean(child && child.exitCode === null && child.signalCode === null);
  }

  /** True once the process of `name` has said that it listens (its boot is over), until it exits. */
  listens(name: Service | string): boolean {
    return this.running(name) && this.listening.has(name);
  }

  /** Send `signal` to the process of `name` (a crash, a shutdown); false when it does not run. */
  kill(name: Service | string, signal: NodeJS.Signals): boolean {
    return this.running(name) && this.children.get(name)!.kill(signal);
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

  /** Stop every service with SIGTERM (graceful shutdown); resolves once each has exited and its output is read to the end. */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.children.entries()].map(([name, child]) => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 5000).unref();
        }
        return this.closed.get(name) ?? Promise.resolve();
      }),
    );
    this.children.clear();
  }

  private portsInUse(): LabPorts {
    if (!this.ports) throw new Error('the lab has no ports before start()');
    return this.ports;
  }

  private collect(name: string, service: Service, line: string): void {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      // Nest logs this once the server listens: from then on the port is this process's.
      if (entry.context === 'NestApplication') this.listening.add(name);
      this.record({ ...entry, service } as LabEvent);
    } catch {
      // Not a log line of ours (e.g. a stack trace): irrelevant to the timeline.
    }
  }

  /**
   * Poll `/health` once the process says it listens, never before: until
   * then an answer on its port could come from whoever else holds it. Stops
   * when the process exits (the caller is told why by its exit).
   */
  private async waitHealthy(name: Service | string, child: ChildProcess): Promise<void> {
    const deadline = Date.now() + START_BOUND_MS;
    while (child.exitCode === null && child.signalCode === null) {
      if (Date.now() > deadline) throw new Error(`${name} did not answer /health within ${START_BOUND_MS} ms`);
      if (this.listening.has(name)) {
        try {
          const response = await fetch(`${this.url(name)}/health`);
          await response.arrayBuffer();
          if (response.ok) return;
        } catch {
          // Not answering yet.
        }
      }
      await sleep(50);
    }
    throw new Error(`${name} exited before it answered /health`);
  }
}
