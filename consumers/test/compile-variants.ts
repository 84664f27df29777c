/** One way a NestJS app is compiled: its package type and the compiler options that differ. */
export interface CompileVariant {
  name: string;
  /** The `type` of the app's package.json: how Node loads the emitted JavaScript. */
  packageType: 'commonjs' | 'module';
  compilerOptions: Record<string, unknown>;
}

/**
 * What every variant shares: the options NestJS starters set, and `skipLibCheck`
 * off, so that the libraries' declarations are checked under the consumer's
 * resolution too (with it on, an import a declaration cannot resolve silently
 * becomes `any`).
 */
export const SHARED_COMPILER_OPTIONS = {
  target: 'es2022',
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  skipLibCheck: false,
  types: ['node'],
  rootDir: 'src',
  outDir: 'dist',
};

/** The three ways NestJS apps in the wild are compiled. */
export const COMPILE_VARIANTS: CompileVariant[] = [
  {
    // The NestJS 11 starter and NestJS 12's CommonJS starter: require() of NestJS 12 needs require(esm).
    name: 'commonjs',
    packageType: 'commonjs',
    compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' },
  },
  {
    // NestJS 12's ESM starter: the app imports the libraries' CommonJS entries. Their
    // declarations are CommonJS whatever the app is, and `commonjs` has already
    // checked them under `nodenext`: not twice, the lib check is most of a compile.
    name: 'esm',
    packageType: 'module',
    compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', skipLibCheck: true },
  },
  {
    // The starter before NestJS 11: package `exports` are invisible, subpaths resolve through `typesVersions`.
    name: 'node10',
    packageType: 'commonjs',
    compilerOptions: { module: 'commonjs', moduleResolution: 'node10', ignoreDeprecations: '6.0' },
  },
];
