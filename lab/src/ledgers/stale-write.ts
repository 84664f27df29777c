import { ConflictException } from '@nestjs/common';
import { Counter } from 'prom-client';

/**
 * Stale writes the lab's ledgers refused, on payments' `/metrics` (the
 * process's one registry): payments' own ledger needs no such count, its
 * charge commits with the record's completion, which the store refuses to a
 * holder that lost its lease.
 */
const staleWrites = new Counter({
  name: 'ledger_stale_writes_refused_total',
  help: 'Charges refused because a newer execution of the same key had already written',
});

/**
 * A write the lab's ledger refused because a newer execution of the same
 * record had already written: the records and the ledger are two stores
 * there, so the ledger checks the fence itself. A 409, as any other
 * `HttpException` a ledger throws, is payments' answer.
 */
export class StaleWriteError extends ConflictException {
  override name = 'StaleWriteError';

  constructor() {
    super('A newer attempt with this key has already charged');
    staleWrites.inc();
  }
}
