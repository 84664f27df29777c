import { IdempotentHttpClient } from '@idempotency-chain/http-client';
import { IDEMPOTENCY_MODULE_OPTIONS, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { ChargePublisher } from '@idempotency-chain/orders';
import { LEDGER, type Ledger } from '@idempotency-chain/payments';
import { nextHopClient, prepareServiceApp, serviceAdapter, type ServiceConfig, type ServiceName } from '@idempotency-chain/service-runtime';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import { PinoLogger } from 'nestjs-pino';
import { decorateProvider } from './decorate-provider';
import { FaultyLedger } from './faults/faulty-ledger';
import { LabFaults } from './faults/lab-faults';
import { keyedOptions, outboundKeyPolicy } from './key-policies';
import type { LabConfig } from './lab-config';
import { LabModule } from './lab.module';
import { naiveOptions } from './naive-variants';
import { PlainLedger } from './plain-ledger';
import { CHAIN } from './services';

/** orders' publisher when the lab's policy sends no key: the message carries none either. */
class KeylessChargePublisher extends ChargePublisher {
  protected override outboundKey(): undefined {
    return undefined;
  }
}

/**
 * `service`'s app, built from the app's own module, with the lab applied
 * from outside: `LabModule` beside it (the fault endpoint, the attempt and
 * lost-reply interceptors), and the app's providers decorated or replaced by
 * token, as `@nestjs/testing` replaces them in a test:
 *
 * - the idempotency options: the route key mode of the lab's `KEY_POLICY`,
 *   and the naive variants (`LAB_NAIVE`) of the policy;
 * - the next hop's client, and orders' publisher: the policy's outbound keys
 *   (none, or the per-attempt strategy);
 * - payments' ledger: the fault points around the write, and the plain
 *   ledger of the naive variant.
 *
 * Under `KEY_POLICY=propagated` with no naive variant, every app provider is
 * the app's own.
 */
export async function createLabApp(service: ServiceName, config: ServiceConfig, lab: LabConfig): Promise<NestFastifyApplication> {
  const root = CHAIN[service].module(config);
  const builder = Test.createTestingModule({ imports: [root, LabModule] });
  decorateProvider(builder, root, IDEMPOTENCY_MODULE_OPTIONS, (options: IdempotencyModuleOptions) =>
    naiveOptions(keyedOptions(options, lab.keyPolicy, service), lab.naive),
  );
  overrideOutboundKeys(builder, service, config, lab);
  if (service === 'payments') {
    decorateProvider(
      builder,
      root,
      LEDGER,
      (ledger: Ledger, faults: LabFaults) => new FaultyLedger(lab.naive.has('plain-ledger') ? new PlainLedger(ledger) : ledger, faults),
      [LabFaults],
    );
  }
  const moduleRef = await builder.compile();
  return prepareServiceApp(moduleRef.createNestApplication<NestFastifyApplication>(serviceAdapter(), { bufferLogs: true }));
}

/** The client and publisher the app would build, sending the keys of the lab's policy instead of propagating. */
function overrideOutboundKeys(builder: TestingModuleBuilder, service: ServiceName, config: ServiceConfig, lab: LabConfig): void {
  const keyPolicy = outboundKeyPolicy(lab.keyPolicy, service);
  if (keyPolicy === 'propagated') return;
  // Only what the app provides is replaced: orders has a client over HTTP, a publisher over RabbitMQ.
  // Without keys the client would not retry a POST at all: the lab makes it, to show what that costs.
  const options = { keyPolicy, ...(keyPolicy === 'none' && { retryUnkeyed: true }) };
  builder
    .overrideProvider(IdempotentHttpClient)
    .useFactory({ inject: [PinoLogger], factory: (logger: PinoLogger) => nextHopClient(config, logger, options) });
  if (keyPolicy !== 'none') return;
  builder
    .overrideProvider(ChargePublisher)
    .useFactory({ inject: [PinoLogger], factory: (logger: PinoLogger) => new KeylessChargePublisher(config, logger) });
}
