import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { scratchDependencies, type NestMajor } from '../app/dependencies';
import { runCommand } from './command';
import { SHARED_COMPILER_OPTIONS, type CompileVariant } from './compile-variants';
import type { LibraryName } from './library-tarballs';

/** The scratch app's single source file. */
const APP_SOURCE = resolve(__dirname, '../app/main.ts');
/** The workspace's TypeScript, the version the starters of both majors accept. */
const TSC = require.resolve('typescript/bin/tsc');

/**
 * A NestJS app in a folder outside the workspace: one `npm install` of the
 * packed libraries and one NestJS major from the registry, then one
 * subfolder per compile variant. Node finds the shared `node_modules` from
 * each subfolder, and each subfolder's package.json sets its module type.
 */
export class ScratchProject {
  private constructor(readonly folder: string) {}

  /**
   * Install into `folder`: no lock file, so each run gets the newest release
   * of the major; npm's cache makes a repeated run an offline one.
   */
  static async install(folder: string, major: NestMajor, tarballs: Record<LibraryName, string>): Promise<ScratchProject> {
    await mkdir(folder, { recursive: true });
    const { dependencies, devDependencies } = scratchDependencies(major);
    const libraries = Object.fromEntries(Object.entries(tarballs).map(([name, tarball]) => [name, `file:${tarball}`]));
    const manifest = { name: `scratch-nest${major}`, private: true, dependencies: { ...libraries, ...dependencies }, devDependencies };
    await writeFile(join(folder, 'package.json'), JSON.stringify(manifest, null, 2));
    await runCommand('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', '--loglevel=error'], {
      cwd: folder,
      timeoutMs: 600_000,
    });
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
