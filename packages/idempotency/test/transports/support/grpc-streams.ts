import { join } from 'node:path';
import type { INestMicroservice, Type } from '@nestjs/common';
import { Transport } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { credentials, loadPackageDefinition, type Client } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { freePort } from '../../support/redis';
import { consumerModule } from './charges';

const PROTO = join(__dirname, 'charge-streams.proto');
const LOADER: Options = { keepCase: false, defaults: true, includeDirs: [__dirname] };

/** One reply of the `ChargeStreams` methods (`ChargeReply`). */
export interface Reply {
  charge: number;
  amountCents: number;
}

/** The consumer with `controller` (and `options` for its module), as a gRPC microservice on a free loopback port (not listening yet). */
export async function grpcConsumer(
  controller: Type,
  options?: Partial<IdempotencyModuleOptions>,
): Promise<{ microservice: INestMicroservice; url: string }> {
  const url = `127.0.0.1:${await freePort()}`;
  const moduleRef = await Test.createTestingModule({ imports: [consumerModule([controller], options)] }).compile();
  const microservice = moduleRef.createNestMicroservice({
    transport: Transport.GRPC,
    options: { url, package: 'payments', protoPath: PROTO, loader: LOADER },
    logger: false,
  });
  return { microservice, url };
}

/** A client of the `ChargeStreams` service at `url`, typed by the caller as the methods it calls. */
export function chargeStreamsClient<T extends Client>(url: string): T {
  const payments = loadPackageDefinition(loadSync(PROTO, LOADER)).payments as Record<string, new (...args: unknown[]) => Client>;
  return new payments.ChargeStreams!(url, credentials.createInsecure()) as T;
}
