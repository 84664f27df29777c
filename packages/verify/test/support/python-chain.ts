import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePorts } from './free-port';

/** The chain, one script for its three services. */
export const PYTHON_CHAIN = join(__dirname, '..', 'fixtures', 'python-chain', 'chain.py');

/** The Python chain, started as three real processes, and the config that verifies it. */
export interface PythonChain {
  /** A chain.yaml for the verifier: entry through the gateway's proxy, one proxy per hop. */
  configYaml: string;
  stop(): Promise<void>;
}

/** How payments runs. */
export interface PaymentsOptions {
  /** Where the keyed variant keeps its keys (default sqlite, with the charges). */
  keys?: 'sqlite' | 'memory';
  /** Leave starting payments to the verifier (a `service` in the config), so it can kill it. */
  startedByVerifier?: boolean;
  /** One planted bug (chain.py's `--flaw`), given to every service. */
  flaw?: string;
  /** Two callers told apart by the merchant in their body (`entry.callers`), for `two-callers`. */
  merchants?: boolean;
}

/**
 * Starts payments, orders and gateway (deepest first, each pointed at the next hop's
 * proxy). Every process and proxy gets its own port, picked together, so a service
 * can never land on a proxy's port.
 */
export async function startPythonChain(variant: 'naive' | 'keyed', dir: string, options: PaymentsOptions = {}): Promise<PythonChain> {
  const ports = (await freePorts(6)) as [number, number, number, number, number, number];
  const [gatewayProxy, ordersProxy, paymentsProxy, gateway, orders, payments] = ports;
  const flaw = options.flaw === undefined ? [] : ['--flaw', options.flaw];
  const paymentsArgs = ['--port', String(payments), '--db', join(dir, `${variant}-charges.sqlite`), '--keys', options.keys ?? 'sqlite'];
  const processes: ChildProcess[] = [];
  const start = async (role: string, ...args: string[]) => {
    const child = spawn('python3', [PYTHON_CHAIN, role, '--variant', variant, ...flaw, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    processes.push(child);
    await listening(child, role);
  };
  try {
    if (!options.startedByVerifier) await start('payments', ...paymentsArgs);
    await start('orders', '--port', String(orders), '--downstream', `http://127.0.0.1:${paymentsProxy}`);
    await start('gateway', '--port', String(gateway), '--downstream', `http://127.0.0.1:${ordersProxy}`);
    const service = options.startedByVerifier
      ? ['python3', PYTHON_CHAIN, 'payments', '--variant', variant, ...flaw, ...paymentsArgs]
      : undefined;
    return {
      configYaml: configYaml({ gatewayProxy, ordersProxy, paymentsProxy, gateway, orders, payments }, service, options.merchants),
      stop: () => stopAll(processes),
    };
  } catch (error) {
    await stopAll(processes);
    throw error;
  }
}

type Ports = Record<'gatewayProxy' | 'ordersProxy' | 'paymentsProxy' | 'gateway' | 'orders' | 'payments', number>;

function configYaml(p: Ports, paymentsService: string[] | undefined, merchants = false): string {
  // JSON is YAML too: the command's paths need no YAML quoting rules.
  const service = paymentsService
    ? `\n    service:\n      start: ${JSON.stringify(paymentsService)}\n      health: http://127.0.0.1:${p.payments}/charges?order=health`
    : '';
  return `# The Python chain: gateway -> orders -> payments, each behind a fault proxy.
entry:
  url: http://127.0.0.1:${p.gatewayProxy}/checkout
  body:
    orderId: "{{intentId}}"
    amount: 1200
  timeoutMs: 10000
  retries: 4${merchants ? '\n  callers: [{ body: { merchant: "shop-{{caller}}" } }, { body: { merchant: "shop-{{caller}}" } }]' : ''}
hops:
  - name: gateway
    listen: 127.0.0.1:${p.gatewayProxy}
    upstream: http://127.0.0.1:${p.gateway}
  - name: orders
    listen: 127.0.0.1:${p.ordersProxy}
    upstream: http://127.0.0.1:${p.orders}
  - name: payments
    listen: 127.0.0.1:${p.paymentsProxy}
    upstream: http://127.0.0.1:${p.payments}
    holdMs: 1500 # past orders' 1 s timeout to payments${service}
effect:
  http:
    url: http://127.0.0.1:${p.payments}/charges?order={{intentId}}
    path: $.count
settle:
  quietMs: 1000
  timeoutMs: 60000
# Past the short-retention flaw's 3 s, and half the default's wait in late-press.
retention:
  minimumMs: 5000
doubleClick:
  presses: 4
`;
}

/** Resolves once a service prints that it listens; rejects, with what it wrote to stderr, if it exits first. */
async function listening(child: ChildProcess, role: string): Promise<void> {
  const stderr: string[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr.push(chunk);
    process.stderr.write(chunk);
  });
  const lines = createInterface({ input: child.stdout! });
  // Neither promise rejects, so the one that loses the race cannot become an unhandled rejection.
  const exited = once(child, 'exit').then(() => false);
  const listens = (async () => {
    for await (const line of lines) if (/^listening \d+$/.test(line)) return true;
    return false;
  })();
  if (!(await Promise.race([listens, exited]))) throw new Error(`python ${role} exited before listening: ${stderr.join('')}`);
}

async function stopAll(processes: ChildProcess[]): Promise<void> {
  await Promise.all(
    processes.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exit = once(child, 'exit');
      child.kill('SIGTERM');
      await exit;
    }),
  );
}
