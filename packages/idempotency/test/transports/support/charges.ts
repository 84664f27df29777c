import { randomUUID } from 'node:crypto';
import { Controller, Injectable, Module, type CanActivate, type DynamicModule, type INestMicroservice, type Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { APP_GUARD } from '@nestjs/core';
import { MessagePattern, Payload, RpcException } from '@nestjs/microservices';
import { IdempotencyModule, Idempotent, type IdempotencyModuleOptions } from '@idempotency-chain/idempotency/nest';
import { createRedisClient, RedisStore } from '@idempotency-chain/idempotency/redis';
import { eventually, latch, type Latch } from '../../support/async';
import { Recorder } from '../../support/recorder';

/** The charge message every transport's consumer takes. */
export interface Charge {
  amountCents: number;
}

/**
 * What the consumer did, and a gate the charge handler waits at when set,
 * so a test can hold the first attempt until every duplicate has arrived.
 */
@Injectable()
export class Ledger {
  /** Messages that reached the app (counted by a guard, before the idempotency interceptor). */
  arrivals = 0;
  charges = 0;
  declines = 0;
  unavailable = 0;
  gate: Latch | undefined;

  /** Hold the charge handler until `release()`; resolves once `count` messages have arrived since. */
  hold(count: number): { arrived: Promise<void>; release: () => void } {
    const gate = latch();
    this.gate = gate;
    const target = this.arrivals + count;
    return {
      arrived: eventually(() => this.arrivals >= target, `${count} messages to arrive`),
      release: () => {
        this.gate = undefined;
        gate.open();
      },
    };
  }

  async charge(body: Charge): Promise<{ charge: number; amountCents: number }> {
    await this.gate?.promise;
    this.charges += 1;
    return { charge: this.charges, amountCents: body.amountCents };
  }

  /** A final refusal (402): stored, and thrown again on replay. */
  decline(body: Charge): never {
    this.declines += 1;
    throw new RpcException({ status: 402, message: `declined ${body.amountCents}`, attempt: this.declines });
  }

  /** A transient failure (503): the key is released. */
  bankDown(): never {
    this.unavailable += 1;
    throw new RpcException({ status: 503, message: 'bank down', attempt: this.unavailable });
  }
}

/** Counts every message before the idempotency interceptor sees it: guards run first. */
@Injectable()
class ArrivalGuard implements CanActivate {
  constructor(private readonly ledger: Ledger) {}

  canActivate(): boolean {
    this.ledger.arrivals += 1;
    return true;
  }
}

/** This test file's own namespace on the shared brokers: another run's consumer never takes its messages. */
const run = randomUUID().slice(0, 8);

/** The message patterns of `ChargesConsumer` (NATS subjects, MQTT topics, Redis channels). */
export const Patterns = {
  charge: `idem.${run}.charge`,
  decline: `idem.${run}.decline`,
  unavailable: `idem.${run}.unavailable`,
} as const;

/** A payments consumer on any transport that routes by a string pattern. */
@Controller()
export class ChargesConsumer {
  constructor(private readonly ledger: Ledger) {}

  @MessagePattern(Patterns.charge)
  @Idempotent('transport.charge')
  charge(@Payload() body: Charge) {
    return this.ledger.charge(body);
  }

  @MessagePattern(Patterns.decline)
  @Idempotent('transport.decline')
  decline(@Payload() body: Charge) {
    return this.ledger.decline(body);
  }

  @MessagePattern(Patterns.unavailable)
  @Idempotent('transport.unavailable')
  unavailable() {
    return this.ledger.bankDown();
  }
}

/**
 * The consumer's module, its store on the real Redis (`REDIS_URL`) under a
 * prefix of its own, so runs never see each other's records (or `options.store`,
 * for a test that inspects its records: see `transportStore`); its events go
 * to the `Recorder` it provides; `options` adds to the module's own.
 */
export function consumerModule(controllers: Type[] = [ChargesConsumer], options: Partial<IdempotencyModuleOptions> = {}): DynamicModule {
  const recorder = new Recorder();
  const store = options.store ?? transportStore();
  @Module({})
  class ConsumerModule {}
  return {
    module: ConsumerModule,
    imports: [
      IdempotencyModule.forRoot({
        service: 'payments',
        store,
        scope: 'shared',
        metrics: false,
        closeStore: true,
        observers: [recorder],
        ...options,
      }),
    ],
    controllers,
    providers: [Ledger, { provide: APP_GUARD, useClass: ArrivalGuard }, { provide: Recorder, useValue: recorder }],
  };
}

/** A store on the real Redis (`REDIS_URL`) under a prefix of its own; the module closes it (`closeStore`). */
export function transportStore(): RedisStore {
  const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  return new RedisStore({ client: createRedisClient(url), prefix: `test:transport:${randomUUID()}:`, ownsClient: true });
}

/** A fresh key per test, so the shared server never replays another test's answer. */
export const freshKey = (label: string): string => `${label}-${randomUUID()}`;

/** What a call settled with, either way, for comparing a first answer with its replay. */
export async function settled<T>(call: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  try {
    return { value: await call };
  } catch (error) {
    return { error };
  }
}

/** The consumer app as a microservice on `options`' transport, listening; `moduleOptions` adds to its module's (see `consumerModule`). */
export async function startConsumer(
  options: object,
  controllers?: Type[],
  moduleOptions?: Partial<IdempotencyModuleOptions>,
): Promise<INestMicroservice> {
  const moduleRef = await Test.createTestingModule({ imports: [consumerModule(controllers, moduleOptions)] }).compile();
  const microservice = moduleRef.createNestMicroservice({ ...options, logger: false });
  await microservice.listen();
  return microservice;
}
