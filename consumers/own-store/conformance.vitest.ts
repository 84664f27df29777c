import { storeConformanceCases } from '@idempotency-chain/idempotency/testing';
import { it } from 'vitest';
import { harness } from './harness.js';

for (const c of storeConformanceCases(harness)) it(c.name, c.run, c.timeoutMs);
