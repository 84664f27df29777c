import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { principalScope } from './scope';

const scopeOf = (user: unknown) => principalScope(new ExecutionContextHost([{ user }, {}]));

describe('principalScope', () => {
  it('types the scope by the kind of principal, so 42 of one kind is never 42 of another', () => {
    const scopes = [{ id: 42 }, { sub: '42' }, { tenantId: '42' }, '42'].map(scopeOf);
    expect(scopes).toEqual(['user:42', 'subject:42', 'tenant:42', 'principal:42']);
    expect(new Set(scopes).size).toBe(4);
  });

  it('gives one principal one scope however its id is spelled', () => {
    expect(scopeOf({ id: 42 })).toBe(scopeOf({ id: '42' }));
    expect(scopeOf({ userId: 42 })).toBe(scopeOf({ id: 42 }));
  });

  it('takes the first identifying field, and resolves nothing without one', () => {
    expect(scopeOf({ id: 7, tenantId: 't-1' })).toBe('user:7');
    expect([undefined, null, '', {}, { id: '' }, { name: 'x' }].map(scopeOf)).toEqual(Array(6).fill(undefined));
  });

  it('resolves nothing for a message: it has no authenticated principal', () => {
    const rpc = new ExecutionContextHost([{}, {}]);
    rpc.setType('rpc');
    expect(principalScope(rpc)).toBeUndefined();
  });
});
