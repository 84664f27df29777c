import { UnreachableError } from './unreachable.js';

describe('UnreachableError', () => {
  it('never shows the password of the address it names', () => {
    const error = new UnreachableError('PostgreSQL', 'postgres://app:hunter2@db:5432/payments', new Error('connect ETIMEDOUT'));
    expect(error.message).toBe('cannot reach PostgreSQL at postgres://app:***@db:5432/payments: connect ETIMEDOUT');
  });

  it("gives the first reason of an AggregateError, whose own message is empty (Node's connect to localhost)", () => {
    const refused = Object.assign(
      new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('connect ECONNREFUSED 127.0.0.1:5432')], ''),
      {
        code: 'ECONNREFUSED',
      },
    );
    expect(new UnreachableError('PostgreSQL', 'postgres://localhost/x', refused).message).toBe(
      'cannot reach PostgreSQL at postgres://localhost/x: connect ECONNREFUSED ::1:5432',
    );
  });
});
