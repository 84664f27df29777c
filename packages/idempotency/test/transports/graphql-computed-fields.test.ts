import { Args, Field, Int, Mutation, ObjectType, Resolver } from '@nestjs/graphql';
import { Idempotent } from '@idempotency-chain/idempotency/nest';
import { freshKey, Ledger } from './support/charges';
import { Drivers, post, startGraphqlApp, type DriverName } from './support/graphql-charges';

@ObjectType('Invoice')
class Invoice {
  @Field(() => Int)
  invoice: number;

  constructor(
    invoice: number,
    private readonly cents: number,
  ) {
    this.invoice = invoice;
  }

  /** A computed field of the entity (a Mongoose virtual, a getter): not an own property. */
  @Field(() => Int)
  get totalCents(): number {
    return this.cents;
  }
}

@Resolver()
class InvoiceResolver {
  constructor(private readonly ledger: Ledger) {}

  @Mutation(() => Invoice)
  @Idempotent('graphql.invoice')
  invoice(@Args('cents', { type: () => Int }) cents: number): Invoice {
    this.ledger.charges += 1;
    return new Invoice(this.ledger.charges, cents);
  }

  @Mutation(() => [Invoice])
  @Idempotent('graphql.invoices')
  invoices(@Args('cents', { type: () => [Int] }) cents: number[]): Invoice[] {
    this.ledger.charges += 1;
    return cents.map((each, at) => new Invoice(at + 1, each));
  }
}

describe.each(Object.keys(Drivers) as DriverName[])('@Idempotent on a mutation returning an entity class (%s)', (driver) => {
  it("replays a class instance's computed field (a getter) as the first answer had it", async () => {
    const { app, url } = await startGraphqlApp(driver, [InvoiceResolver]);
    try {
      const key = freshKey('graphql-getter');
      const call = () => post(url, { query: 'mutation { invoice(cents: 990) { invoice totalCents } }' }, { key, user: 'alice' });
      const first = await call();
      const retry = await call();

      expect(first.body).toEqual({ data: { invoice: { invoice: 1, totalCents: 990 } } });
      expect(retry.body).toEqual(first.body);
      expect(app.get(Ledger).charges).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('replays them in a list, each with its computed field', async () => {
    const { app, url } = await startGraphqlApp(driver, [InvoiceResolver]);
    try {
      const key = freshKey('graphql-getters');
      const call = () => post(url, { query: 'mutation { invoices(cents: [990, 120]) { invoice totalCents } }' }, { key, user: 'alice' });
      const first = await call();
      const retry = await call();

      expect(first.body).toEqual({
        data: {
          invoices: [
            { invoice: 1, totalCents: 990 },
            { invoice: 2, totalCents: 120 },
          ],
        },
      });
      expect(retry.body).toEqual(first.body);
      expect(app.get(Ledger).charges).toBe(1);
    } finally {
      await app.close();
    }
  });
});
