#!/usr/bin/env node
// Start payments, orders and gateway through the lab's entry (in that order,
// each once the previous answers /health), with the environment passed
// through: each service's own variables, and the lab's KEY_POLICY and
// LAB_NAIVE. Ctrl-C stops all. Credentials not set are made for this run: a
// service token per inner hop, and a customer key for account acct-42; the
// ones made are printed once, so that you can call the gateway and read the
// ledger with them.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

const services = [
  { name: 'payments', port: process.env.PAYMENTS_PORT ?? '3002' },
  { name: 'orders', port: process.env.ORDERS_PORT ?? '3001' },
  { name: 'gateway', port: process.env.GATEWAY_PORT ?? '3000' },
];
const children = [];

const token = () => randomBytes(16).toString('hex');
const credentials = { ORDERS_TOKEN: process.env.ORDERS_TOKEN || token(), PAYMENTS_TOKEN: process.env.PAYMENTS_TOKEN || token() };
if (!process.env.GATEWAY_API_KEYS) {
  const apiKey = token();
  credentials.GATEWAY_API_KEYS = JSON.stringify({ [apiKey]: 'acct-42' });
  console.error(`customer key of acct-42 for this run (KEY): ${apiKey}`);
}
if (!process.env.PAYMENTS_TOKEN)
  console.error(`payments' service token for this run (TOKEN, reads the ledger): ${credentials.PAYMENTS_TOKEN}`);

async function ready(port) {
  for (let i = 0; i < 100; i += 1) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`service on port ${port} did not become ready`);
}

function stop(code = 0) {
  for (const child of children) child.kill('SIGTERM');
  process.exitCode = code;
}
process.on('SIGINT', () => stop());
process.on('SIGTERM', () => stop());

for (const { name, port } of services) {
  const child = spawn(process.execPath, ['lab/dist/main.js', name], {
    env: { ...process.env, ...credentials, PORT: port },
    stdio: 'inherit',
  });
  child.on('exit', (code, signal) => {
    if (signal !== 'SIGTERM' && code !== 0) {
      console.error(`${name} exited (${signal ?? code}); stopping the lab`);
      stop(1);
    }
  });
  children.push(child);
  await ready(port);
  console.error(`${name} ready on http://127.0.0.1:${port}`);
}
