import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import ts from 'typescript';
import { IdempotencyError, InFlightError, isIdempotencyError, KeyReusedError, StoreRefusedError } from './errors';

type Errors = typeof import('./errors');

/**
 * A copy of this module as a minifying bundler would leave it: compiled, and
 * every class renamed (`KeyReusedError` to `_c4`...) wherever it is referred
 * to, the names its exports go by and the strings it holds left alone.
 * `written` false also drops the names the classes set in writing.
 */
function minifiedCopy({ written }: { written: boolean }): Errors {
  let source = readFileSync(join(__dirname, 'errors.ts'), 'utf8');
  if (!written) source = source.replace(/keepName\(this, '\w+'\);/g, '');
  let code = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, removeComments: true },
  }).outputText;
  const classes = [...code.matchAll(/\bclass (\w+)/g)].map((found) => found[1]!);
  expect(classes).toContain('KeyReusedError');
  for (const [i, name] of classes.entries()) code = code.replace(new RegExp(`(?<![.'"\\w$])${name}(?![\\w$'"])`, 'g'), `_c${i}`);
  expect(code).not.toMatch(/\bclass [A-Z]/);
  const copy = {} as Errors;
  (runInThisContext(`(function (exports) {\n${code}\n})`) as (exports: object) => void)(copy);
  return copy;
}

describe('isIdempotencyError', () => {
  it('without a class, is true for any error of the package and nothing else', () => {
    expect(isIdempotencyError(new KeyReusedError('reused'))).toBe(true);
    expect(isIdempotencyError(new InFlightError('held', 3))).toBe(true);
    expect(isIdempotencyError(new Error('other'))).toBe(false);
    expect(isIdempotencyError(Object.assign(new Error('same name'), { name: 'KeyReusedError' }))).toBe(false);
    expect(isIdempotencyError(Object.assign(new Error('same name'), { name: 'KeyReusedError' }), KeyReusedError)).toBe(false);
    expect(isIdempotencyError({ name: 'KeyReusedError' })).toBe(false);
    expect(isIdempotencyError(undefined)).toBe(false);
    expect(isIdempotencyError('KeyReusedError')).toBe(false);
  });

  it('with a class, is true for that class only, and narrows to it', () => {
    const error: unknown = new InFlightError('held', 7);
    expect(isIdempotencyError(error, InFlightError)).toBe(true);
    expect(isIdempotencyError(error, KeyReusedError)).toBe(false);
    expect(isIdempotencyError(error, IdempotencyError)).toBe(true);
    if (!isIdempotencyError(error, InFlightError)) throw new Error('not recognised');
    expect(error.retryAfterSeconds).toBe(7);
  });

  it('is true for a class of the app extending one of the package', () => {
    class TenantStoreRefusedError extends StoreRefusedError {}
    const error = new TenantStoreRefusedError('no grant on tenant_records');
    expect(error.name).toBe('TenantStoreRefusedError');
    expect(isIdempotencyError(error, StoreRefusedError)).toBe(true);
    expect(isIdempotencyError(error, TenantStoreRefusedError)).toBe(true);
    expect(isIdempotencyError(new StoreRefusedError('refused'), TenantStoreRefusedError)).toBe(false);
  });

  it("recognises the errors of a second copy of the package, where instanceof does not, by the copy's class or its own", async () => {
    vi.resetModules();
    const other = (await import('./errors.js')) as Errors;
    expect(other.KeyReusedError).not.toBe(KeyReusedError);

    const reused: unknown = new other.KeyReusedError('reused');
    expect(reused instanceof KeyReusedError).toBe(false);
    expect(isIdempotencyError(reused)).toBe(true);
    expect(isIdempotencyError(reused, KeyReusedError)).toBe(true);
    expect(isIdempotencyError(reused, IdempotencyError)).toBe(true);
    expect(isIdempotencyError(reused, InFlightError)).toBe(false);
    expect(other.isIdempotencyError(new KeyReusedError('reused'), other.KeyReusedError)).toBe(true);
    expect(other.isIdempotencyError(new KeyReusedError('reused'), other.InFlightError)).toBe(false);

    const held: unknown = new other.InFlightError('held', 4);
    if (!isIdempotencyError(held, InFlightError)) throw new Error('not recognised');
    expect(held.retryAfterSeconds).toBe(4);
    expect(held.httpStatus).toBe(409);
  });

  it('recognises the errors of a copy whose classes a minifier renamed', () => {
    const minified = minifiedCopy({ written: true });
    const reused: unknown = new minified.KeyReusedError('reused');
    expect(reused instanceof KeyReusedError).toBe(false);
    expect((reused as Error).name).toBe('KeyReusedError');
    expect(isIdempotencyError(reused, KeyReusedError)).toBe(true);
    expect(isIdempotencyError(reused, InFlightError)).toBe(false);
    expect(minified.isIdempotencyError(new KeyReusedError('reused'), minified.KeyReusedError)).toBe(true);
    expect(minified.isIdempotencyError(new InFlightError('held', 1), minified.KeyReusedError)).toBe(false);
    expect(minified.isIdempotencyError(new InFlightError('held', 1), minified.IdempotencyError)).toBe(true);
  });

  it('would not, were the class names not set in writing (what the minified copy above proves)', () => {
    const minified = minifiedCopy({ written: false });
    const reused = new minified.KeyReusedError('reused');
    expect(reused.name).not.toBe('KeyReusedError');
    expect(isIdempotencyError(reused, KeyReusedError)).toBe(false);
  });
});
