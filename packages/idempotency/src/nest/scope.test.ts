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

  it('scopes a principal within its tenant: user 7 of one tenant is not user 7 of another', () => {
    expect(scopeOf({ id: 7, tenantId: 'acme' })).toBe('tenant:acme/user:7');
    expect(scopeOf({ id: 7, tenantId: 'globex' })).not.toBe(scopeOf({ id: 7, tenantId: 'acme' }));
    expect(scopeOf({ sub: 's-1', tenantId: 'acme' })).toBe('tenant:acme/subject:s-1');
  });

  it('encodes every value, so no value can spell another scope', () => {
    expect(scopeOf({ tenantId: 'acme/user:7' })).not.toBe(scopeOf({ id: 7, tenantId: 'acme' }));
    expect(scopeOf({ id: 'a/b:c' })).toBe('user:a%2Fb%3Ac');
    expect(scopeOf('tenant:acme')).toBe('principal:tenant%3Aacme');
  });

  it('takes the first identifying field, and resolves nothing without one', () => {
    expect(scopeOf({ id: 7, userId: 8, sub: '9' })).toBe('user:7');
    expect([undefined, null, '', {}, { id: '' }, { name: 'x' }].map(scopeOf)).toEqual(Array(6).fill(undefined));
  });

  it('resolves nothing for a message: it has no authenticated principal', () => {
    const rpc = new ExecutionContextHost([{}, {}]);
    rpc.setType('rpc');
    expect(principalScope(rpc)).toBeUndefined();
  });
});
