import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { runCommand } from './command';
import { SHARED_COMPILER_OPTIONS, type CompileVariant } from './compile-variants';
import { installFixture } from './fixture';
import type { Tarballs } from './packed-packages';

/** The NestJS majors a scratch app is installed against, each from its own fixture (`fixtures/nest<major>`). */
export const NEST_MAJORS = [11, 12] as const;

/** A NestJS major a scratch app is installed against. */
export type NestMajor = (typeof NEST_MAJORS)[number];

/** The scratch app's single source file. */
const APP_SOURCE = resolve(__dirname, '../app/main.ts');
/** The workspace's TypeScript, the version the starters of both majors accept. */
const TSC = require.resolve('typescript/bin/tsc');

/**
 * A NestJS app in a folder outside the workspace: one install of the packed
 * libraries and one NestJS major from its fixture's lock, then one subfolder
 * per compile variant. Node finds the shared `node_modules` from each
 * subfolder, and each subfolder's package.json sets its module type.
 */
export class ScratchProject {
  private constructor(readonly folder: string) {}

  static async install(folder: string, major: NestMajor, tarballs: Tarballs): Promise<ScratchProject> {
    await mkdir(folder, { recursive: true });
    await installFixture(folder, `nest${major}`, tarballs, 600_000);
    return new ScratchProject(folder);
  }

  /** Where an installed package lives. */
  packageFolder(name: string): string {
    return join(this.folder, 'node_modules', name);
  }

  /** The installed version of a package, read from its package.json. */
  async installedVersion(name: string): Promise<string> {
    const manifest = JSON.parse(await readFile(join(this.packageFolder(name), 'package.json'), 'utf8')) as { version: string };
    return manifest.version;
  }

  /** Compile the app one way with `tsc`; resolves to the entry file to run with `node`. */
  async compile(variant: CompileVariant): Promise<string> {
    const root = join(this.folder, variant.name);
    await mkdir(join(root, 'src'), { recursive: true });
    await copyFile(APP_SOURCE, join(root, 'src', 'main.ts'));
    await writeFile(join(root, 'package.json'), JSON.stringify({ type: variant.packageType }));
    const compilerOptions = { ...SHARED_COMPILER_OPTIONS, ...variant.compilerOptions };
    await writeFile(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['src'] }, null, 2));
    await runCommand(process.execPath, [TSC, '-p', root], { cwd: root, timeoutMs: 600_000 });
    return join(root, 'dist', 'main.js');
  }
}
