import { test } from 'node:test';
import { storeConformanceCases } from '@idempotency-chain/idempotency/testing';
import { harness } from './harness.js';

for (const c of storeConformanceCases(harness)) void test(c.name, { timeout: c.timeoutMs }, c.run);
