import { NestingDepthPipe } from '@idempotency-chain/idempotency/nest';
import { ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { attachMessageTransports } from './message-transports.js';
import { PaymentsModule } from './payments.module.js';

/** The service token a test's payments accepts (`PAYMENTS_TOKEN`). */
export const PAYMENTS_TOKEN = 'test-token-of-payments-hop';

/** The database of the tests: `DATABASE_URL`, else the local PostgreSQL. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Where a test sends requests, and the `Authorization` it presents there (none: unauthenticated). */
export interface Target {
  url: string;
  authorization?: string;
}

/** payments booted in the test's process on an ephemeral loopback port. */
export interface BootedPayments extends Target {
  app: NestFastifyApplication;
  authorization: string;
}

/**
 * Boot payments as `main.ts` does (validation, the queue consumer under
 * `CHARGE_TRANSPORT=amqp`), with `env` over quiet logs, the test's token and
 * database, on a loopback port of its own.
 */
export async function bootPayments(env: Record<string, string> = {}): Promise<BootedPayments> {
  const root = await PaymentsModule.forRoot({ LOG_LEVEL: 'silent', PAYMENTS_TOKEN, DATABASE_URL, ...env });
  const app = await NestFactory.create<NestFastifyApplication>(root, new FastifyAdapter({ bodyLimit: 64 * 1024 }), { logger: false });
  app.useGlobalPipes(new NestingDepthPipe(), new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  try {
    await attachMessageTransports(app);
  } catch (error) {
    await app.close(); // a boot that fails leaves no connection open behind it
    throw error;
  }
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}`, authorization: `Bearer ${env.PAYMENTS_TOKEN ?? PAYMENTS_TOKEN}` };
}

/** The built entry: `npm run build` first (`npm test` does, `pretest`). */
export const MAIN = join(import.meta.dirname, '..', 'dist', 'main.js');

/** Run the built payments with `env` alone (and PATH) to its exit. */
export async function bootMain(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const bound = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(bound);
  return { code, stdout, stderr };
}

/** The one line a boot prints when `what` does not answer at `redacted` (its password starred) on loopback `port`. */
export function unreachableAt(what: string, redacted: string, port: number): RegExp {
  return new RegExp(`^payments: cannot reach ${what} at ${redacted.replace(/[*]/g, '\\*')}127\\.0\\.0\\.1:${port}\\S*: .+\\n$`);
}

/** What payments answered. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

const credentialsOf = (target: Target): Record<string, string> =>
  target.authorization === undefined ? {} : { authorization: target.authorization };

/** POST `body` (JSON, or a string sent as it is) to `path`, with `key` as its `Idempotency-Key` and the target's `authorization`. */
export async function post(target: Target, path: string, body: unknown, key?: string): Promise<Answer> {
  const response = await fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...credentialsOf(target), ...(key === undefined ? {} : { 'idempotency-key': key }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** How many charges the ledger holds for `orderId`, read through `GET /charges`. */
export async function chargeCount(payments: Target, orderId: string): Promise<number> {
  const response = await fetch(`${payments.url}/charges?orderId=${encodeURIComponent(orderId)}`, { headers: credentialsOf(payments) });
  return ((await response.json()) as { count: number }).count;
}

/** A loopback port nothing listens on (at the time of asking). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
