import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** The workspace root: its `node_modules` links each package to its built folder. */
const WORKSPACE = resolve(__dirname, '../..');

/** The most code a quick start may show, over all of its blocks. */
export const MAX_QUICK_START_LINES = 10;

/** One fenced block of a README's quick start. */
export interface CodeBlock {
  /** The fence's language: `ts`, `yaml` or `sh`. */
  lang: string;
  code: string;
}

/**
 * The fenced blocks under a README's `## Quick start` heading, up to the next
 * `##` heading: what a reader copies first, so what the test runs.
 */
export async function quickStart(readme: string): Promise<CodeBlock[]> {
  const markdown = await readFile(readme, 'utf8');
  const section = /^## Quick start\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(markdown);
  if (!section) throw new Error(`${readme} has no "## Quick start" section`);
  return [...(section[1] as string).matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1] as string, code: m[2] as string }));
}

/** Lines of code over every block, blank lines and comments included. */
export function codeLines(blocks: CodeBlock[]): number {
  return blocks.reduce((sum, block) => sum + block.code.trimEnd().split('\n').length, 0);
}

/**
 * A folder a reader would copy the quick start into, with the packages
 * resolved as an install would have them: every workspace dependency linked,
 * the published packages' bins on `node_modules/.bin` (npm would make them
 * executable; a shim calls node on them instead of changing the build).
 * `ts` blocks become `quick-start.ts`; a `yaml` block goes to the file its
 * first comment names (`# chain.yaml: ...`).
 */
export async function writeQuickStart(folder: string, blocks: CodeBlock[]): Promise<void> {
  const modules = join(folder, 'node_modules');
  await mkdir(join(modules, '.bin'), { recursive: true });
  for (const entry of await readdir(join(WORKSPACE, 'node_modules'))) {
    if (entry !== '.bin') await symlink(join(WORKSPACE, 'node_modules', entry), join(modules, entry));
  }
  for (const name of ['idempotency', 'http-client', 'verify']) {
    const dir = join(WORKSPACE, 'packages', name);
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
    for (const [bin, path] of Object.entries(manifest.bin ?? {})) {
      await writeFile(join(modules, '.bin', bin), `#!/bin/sh\nexec node ${JSON.stringify(join(dir, path))} "$@"\n`, { mode: 0o755 });
    }
  }
  await writeFile(join(folder, 'package.json'), JSON.stringify({ private: true, type: 'commonjs' }));
  for (const block of blocks) {
    if (block.lang === 'ts') await writeFile(join(folder, 'quick-start.ts'), block.code);
    if (block.lang === 'yaml') {
      const name = /^# ([\w.-]+):/.exec(block.code)?.[1];
      if (!name) throw new Error(`a yaml block must name its file in its first line ("# chain.yaml: ..."):\n${block.code}`);
      await writeFile(join(folder, name), block.code);
    }
  }
  const compilerOptions = { strict: true, module: 'nodenext', target: 'es2022', types: ['node'], outDir: 'out', skipLibCheck: true };
  await writeFile(join(folder, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['quick-start.ts'] }));
}

/** What a `// prints: ...` comment in a `ts` block says the program prints, one line per comment. */
export function printedLines(block: CodeBlock): string[] {
  return [...block.code.matchAll(/\/\/ prints: (.+)$/gm)].map((m) => (m[1] as string).trim());
}
