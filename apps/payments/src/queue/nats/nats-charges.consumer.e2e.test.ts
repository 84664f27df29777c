import { formatIdempotencyKey, HeaderName } from '@idempotency-chain/idempotency';
import { ClientNats, NatsRecordBuilder } from '@nestjs/microservices';
import { headers } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import { bootPayments, chargeCount, PAYMENTS_TOKEN, type BootedPayments } from '../../payments.test-support.js';
import { CHARGE_PATTERN, CHARGE_TOKEN_HEADER } from '../charge-queue.js';

/** The broker: `NATS_URL`, else the local NATS. */
const NATS_URL = process.env.NATS_URL || 'nats://127.0.0.1:4222';

const order = () => ({ orderId: `o-${randomUUID()}`, account: 'acct-7', amountCents: 500 });

describe('payments answering charge requests on NATS', () => {
  const client = new ClientNats({ servers: [NATS_URL] });
  let payments: BootedPayments;

  beforeAll(async () => {
    payments = await bootPayments({ CHARGE_TRANSPORT: 'nats', NATS_URL });
    await client.connect();
  });
  afterAll(async () => {
    await client.close();
    await payments?.app.close();
  });

  /** Request a charge as orders does: the key (if any) and the service token (unless `null`) in the message's headers. */
  const request = (data: object, key?: string, token: string | null = PAYMENTS_TOKEN) => {
    const sent = headers();
    if (token !== null) sent.set(CHARGE_TOKEN_HEADER, `Bearer ${token}`);
    if (key !== undefined) sent.set(HeaderName.IdempotencyKey, formatIdempotencyKey(key));
    return lastValueFrom(client.send<{ chargeId: string }>(CHARGE_PATTERN, new NatsRecordBuilder(data).setHeaders(sent).build()));
  };

  it('charges a request sent twice with one key once, answering both with the same charge', async () => {
    const charge = order();
    const key = randomUUID();
    const first = await request(charge, key);
    const again = await request(charge, key);
    expect(again.chargeId).toBe(first.chargeId);
    expect(await chargeCount(payments, charge.orderId)).toBe(1);
  });

  it('charges two keys twice: the key, read from the NATS headers, is what tells a retry from a new intent', async () => {
    const charge = order();
    const [first, second] = [await request(charge, randomUUID()), await request(charge, randomUUID())];
    expect(second.chargeId).not.toBe(first.chargeId);
    expect(await chargeCount(payments, charge.orderId)).toBe(2);
  });

  it('refuses a request without the service token and charges nothing', async () => {
    const charge = order();
    await expect(request(charge, randomUUID(), null)).rejects.toBeDefined();
    expect(await chargeCount(payments, charge.orderId)).toBe(0);
  });

  it('reports the broker in /health', async () => {
    const health = await fetch(`${payments.url}/health`);
    expect(await health.json()).toMatchObject({ status: 'ok', info: { broker: { status: 'up' } } });
  });
});
