import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import ts from 'typescript';
import { DeadlineExceededError, HttpCallError, isHttpCallError, OutcomeUnknownError, RetriesExhaustedError } from './errors';

type Errors = typeof import('./errors');

const last = { attempts: 3, outcome: 'http-error', status: 503 } as const;

/**
 * A copy of this module as a minifying bundler would leave it: compiled, and
 * every class renamed (`RetriesExhaustedError` to `_c1`...) wherever it is
 * referred to, the names its exports go by and the strings it holds left
 * alone. `written` false also drops the names the classes set in writing.
 */
function minifiedCopy({ written }: { written: boolean }): Errors {
  let source = readFileSync(join(__dirname, 'errors.ts'), 'utf8');
  if (!written) source = source.replace(/keepName\(this, '\w+'\);/g, '');
  let code = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, removeComments: true },
  }).outputText;
  const classes = [...code.matchAll(/\bclass (\w+)/g)].map((found) => found[1]!);
  expect(classes).toContain('RetriesExhaustedError');
  for (const [i, name] of classes.entries()) code = code.replace(new RegExp(`(?<![.'"\\w$])${name}(?![\\w$'"])`, 'g'), `_c${i}`);
  expect(code).not.toMatch(/\bclass [A-Z]/);
  expect(code).not.toMatch(/\brequire\(/);
  const copy = {} as Errors;
  (runInThisContext(`(function (exports) {\n${code}\n})`) as (exports: object) => void)(copy);
  return copy;
}

describe('isHttpCallError', () => {
  it('without a class, is true for any error a call ends with and nothing else', () => {
    expect(isHttpCallError(new RetriesExhaustedError('POST /charges', last))).toBe(true);
    expect(isHttpCallError(new OutcomeUnknownError('POST /charges', last))).toBe(true);
    expect(isHttpCallError(new Error('other'))).toBe(false);
    const sameName = Object.assign(new Error('same name'), { name: 'RetriesExhaustedError' });
    expect(isHttpCallError(sameName)).toBe(false);
    expect(isHttpCallError(sameName, RetriesExhaustedError)).toBe(false);
    expect(isHttpCallError(undefined)).toBe(false);
  });

  it('with a class, is true for that class only, and narrows to it', () => {
    const error: unknown = new DeadlineExceededError('inbound-deadline', 'POST /charges', last);
    expect(isHttpCallError(error, DeadlineExceededError)).toBe(true);
    expect(isHttpCallError(error, RetriesExhaustedError)).toBe(false);
    expect(isHttpCallError(error, HttpCallError)).toBe(true);
    if (!isHttpCallError(error, DeadlineExceededError)) throw new Error('not recognised');
    expect(error.limit).toBe('inbound-deadline');
  });

  it("recognises the errors of a second copy of the package, where instanceof does not, by the copy's class or its own", async () => {
    vi.resetModules();
    const other = (await import('./errors.js')) as Errors;
    expect(other.RetriesExhaustedError).not.toBe(RetriesExhaustedError);

    const exhausted: unknown = new other.RetriesExhaustedError('POST /charges', last);
    expect(exhausted instanceof RetriesExhaustedError).toBe(false);
    expect(isHttpCallError(exhausted)).toBe(true);
    expect(isHttpCallError(exhausted, RetriesExhaustedError)).toBe(true);
    expect(isHttpCallError(exhausted, HttpCallError)).toBe(true);
    expect(isHttpCallError(exhausted, DeadlineExceededError)).toBe(false);
    expect(other.isHttpCallError(new RetriesExhaustedError('POST /charges', last), other.RetriesExhaustedError)).toBe(true);
    expect(other.isHttpCallError(new RetriesExhaustedError('POST /charges', last), other.OutcomeUnknownError)).toBe(false);
    if (!isHttpCallError(exhausted, RetriesExhaustedError)) throw new Error('not recognised');
    expect(exhausted.lastStatus).toBe(503);
  });

  it('recognises the errors of a copy whose classes a minifier renamed', () => {
    const minified = minifiedCopy({ written: true });
    const exhausted: unknown = new minified.RetriesExhaustedError('POST /charges', last);
    expect(exhausted instanceof RetriesExhaustedError).toBe(false);
    expect((exhausted as Error).name).toBe('RetriesExhaustedError');
    expect(isHttpCallError(exhausted, RetriesExhaustedError)).toBe(true);
    expect(isHttpCallError(exhausted, DeadlineExceededError)).toBe(false);
    expect(minified.isHttpCallError(new RetriesExhaustedError('POST /charges', last), minified.RetriesExhaustedError)).toBe(true);
    expect(minified.isHttpCallError(new OutcomeUnknownError('POST /charges', last), minified.RetriesExhaustedError)).toBe(false);
    expect(minified.isHttpCallError(new OutcomeUnknownError('POST /charges', last), minified.HttpCallError)).toBe(true);
  });

  it('would not, were the class names not set in writing (what the minified copy above proves)', () => {
    const minified = minifiedCopy({ written: false });
    const exhausted = new minified.RetriesExhaustedError('POST /charges', last);
    expect(exhausted.name).not.toBe('RetriesExhaustedError');
    expect(isHttpCallError(exhausted, RetriesExhaustedError)).toBe(false);
  });
});
