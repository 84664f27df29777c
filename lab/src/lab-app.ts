import type { IdempotentClientOptions } from '@idempotency-chain/http-client';
import { drainOnShutdown, IDEMPOTENCY_MODULE_OPTIONS, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { flushSpans } from '@idempotency-chain/idempotency/opentelemetry';
import { ORDERS_CLIENT_OPTIONS } from '@idempotency-chain/gateway';
import { ChargePublisher, NatsChargeRequester, PAYMENTS_CLIENT_OPTIONS } from '@idempotency-chain/orders';
import { LEDGER, type Ledger } from '@idempotency-chain/payments';
import { ValidationPipe, type DynamicModule } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test, type TestingModuleBuilder } from '@nestjs/testing';
import { declaredProvider, decorateProvider } from './decorate-provider';
import { FaultyLedger } from './faults/faulty-ledger';
import { LabFaults } from './faults/lab-faults';
import { keyedOptions, outboundKeyPolicy } from './key-policies';
import type { LabConfig } from './lab-config';
import { LabModule } from './lab.module';
import { labLedger, labRecords } from './ledgers/lab-ledger';
import { naiveOptions } from './naive-variants';
import { PlainLedger } from './plain-ledger';
import type { ChainApp, LabStore, ServiceName } from './services';

/** orders' publisher when the lab's policy sends no key: the message carries none either. */
class KeylessChargePublisher extends ChargePublisher {
  protected override outboundKey(): undefined {
    return undefined;
  }
}

/** orders' NATS requester when the lab's policy sends no key: the request carries none either. */
class KeylessNatsChargeRequester extends NatsChargeRequester {
  protected override outboundKeyHeaders(): Record<string, string> {
    return {};
  }
}

/** The options token of each service's client for its next hop (payments has none). */
const NEXT_HOP_CLIENT_OPTIONS: Partial<Record<ServiceName, symbol>> = {
  gateway: ORDERS_CLIENT_OPTIONS,
  orders: PAYMENTS_CLIENT_OPTIONS,
};

/**
 * `service`'s app, built from the app's own module (`chain.root`), with the
 * lab applied from outside: `LabModule` beside it (the fault endpoint, the
 * attempt and lost-reply interceptors), and the app's providers decorated or
 * replaced by token, as `@nestjs/testing` replaces them in a test:
 *
 * - the idempotency options: the route key mode of the lab's `KEY_POLICY`,
 *   and the naive variants (`LAB_NAIVE`) of the policy;
 * - the options of the next hop's client, and orders' publisher: the
 *   policy's outbound keys (none, or the per-attempt strategy);
 * - payments' ledger: the fault points around the write, and the plain
 *   ledger of the naive variant; on the in-process store and on Redis,
 *   which payments refuses (it requires PostgreSQL), the lab's own records
 *   and ledger of that store (see `labRecords`, `labLedger`).
 *
 * The app is then prepared as the apps' `main.ts` prepare theirs: JSON
 * logs, validation, and the drain on SIGTERM.
 *
 * Under `KEY_POLICY=propagated` with no naive variant on PostgreSQL, every
 * app provider is the app's own.
 */
export async function createLabApp(service: ServiceName, chain: ChainApp, lab: LabConfig): Promise<NestFastifyApplication> {
  const { root, labStore } = chain;
  const builder = Test.createTestingModule({ imports: [root, LabModule] });
  decorateProvider(builder, root, IDEMPOTENCY_MODULE_OPTIONS, async (options: IdempotencyModuleOptions) =>
    naiveOptions(keyedOptions(labStore ? await onLabStore(options, labStore) : options, lab.keyPolicy, service), lab.naive),
  );
  overrideOutboundKeys(builder, chain, service, lab);
  if (service === 'payments') overrideLedger(builder, root, labStore, lab);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter({ bodyLimit: 64 * 1024 }), { bufferLogs: true });
  // nestjs-pino ships CommonJS and ES module builds, each with its own classes: the apps' LoggerModule provides
  // the ES module's `Logger`, which `import()` loads (a `require` from here would load the other build's).
  const { Logger } = await import('nestjs-pino');
  app.useLogger(app.get(Logger));
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  app.enableShutdownHooks();
  drainOnShutdown(app, { afterDrain: flushSpans });
  return app;
}

/**
 * payments' idempotency options with the lab's records in place of the
 * PostgreSQL store payments built (never connected: closed here, ending its
 * idle pool); their completions no longer in a transaction of the store.
 */
async function onLabStore(options: IdempotencyModuleOptions, labStore: LabStore): Promise<IdempotencyModuleOptions> {
  await options.store.close();
  return { ...options, store: labRecords(labStore), defaults: { ...options.defaults, transactional: false } };
}

/**
 * payments' ledger with the lab's fault points in front of it (and the plain
 * ledger of the naive variant): on PostgreSQL, payments' own, decorated; on
 * the stores payments refuses, the lab's ledger of that store in its place.
 */
function overrideLedger(builder: TestingModuleBuilder, root: DynamicModule, labStore: LabStore | undefined, lab: LabConfig): void {
  const faulty = (ledger: Ledger, faults: LabFaults) =>
    new FaultyLedger(lab.naive.has('plain-ledger') ? new PlainLedger(ledger) : ledger, faults);
  if (!labStore) return decorateProvider(builder, root, LEDGER, faulty, [LabFaults]);
  builder.overrideProvider(LEDGER).useFactory({
    inject: [LabFaults, ConfigService],
    // Kept as long as the records are: payments' own retention.
    factory: (faults: LabFaults, config: ConfigService) =>
      faulty(labLedger(labStore, config.getOrThrow<number>('IDEMPOTENCY_RETENTION_MS'), lab), faults),
  });
}

/** The client and publisher the app provides, sending the keys of the lab's policy instead of propagating. */
function overrideOutboundKeys(builder: TestingModuleBuilder, { root }: ChainApp, service: ServiceName, lab: LabConfig): void {
  const keyPolicy = outboundKeyPolicy(lab.keyPolicy, service);
  if (keyPolicy === 'propagated') return;
  // Only what the app provides is changed: orders has a client over HTTP, a publisher over RabbitMQ.
  const clientOptions = NEXT_HOP_CLIENT_OPTIONS[service];
  if (clientOptions !== undefined && declaredProvider(root, clientOptions)) {
    // Without keys the client would not retry a POST at all: the lab makes it, to show what that costs.
    decorateProvider(builder, root, clientOptions, (options: IdempotentClientOptions) => ({
      ...options,
      keyPolicy,
      ...(keyPolicy === 'none' && { retryUnkeyed: true }),
    }));
  }
  if (keyPolicy === 'none' && declaredProvider(root, ChargePublisher)) {
    builder.overrideProvider(ChargePublisher).useClass(KeylessChargePublisher);
  }
  if (keyPolicy === 'none' && declaredProvider(root, NatsChargeRequester)) {
    builder.overrideProvider(NatsChargeRequester).useClass(KeylessNatsChargeRequester);
  }
}
