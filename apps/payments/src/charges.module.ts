import { Module } from '@nestjs/common';
import { ChargeService } from './charges.service.js';
import { ledgerProvider, LEDGER } from './ledger.provider.js';
import { ServiceToken } from './service-token.guard.js';

/**
 * The charge path every transport shares: the ledger (`LEDGER`), the one
 * way to write it (`ChargeService`) and the hop's service token
 * (`ServiceToken`, checked on each HTTP request and each message).
 */
@Module({
  providers: [ledgerProvider, ChargeService, ServiceToken],
  exports: [LEDGER, ChargeService, ServiceToken],
})
export class ChargesModule {}
