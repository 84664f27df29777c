import { access, readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * The files that the source maps and declaration maps of an installed
 * package point at but the package does not contain: what a reader's
 * "go to definition" or a stack trace would fail to open.
 */
export async function missingMapSources(packageFolder: string): Promise<string[]> {
  const maps = (await readdir(packageFolder, { recursive: true })).filter((file) => file.endsWith('.map'));
  if (maps.length === 0) throw new Error(`${packageFolder} ships no maps`);
  const missing: string[] = [];
  for (const map of maps) {
    const path = join(packageFolder, map);
    const { sources, sourceRoot = '' } = JSON.parse(await readFile(path, 'utf8')) as { sources: string[]; sourceRoot?: string };
    for (const source of sources) {
      const target = resolve(dirname(path), sourceRoot, source);
      await access(target).catch(() => missing.push(`${map} -> ${source}`));
    }
  }
  return missing;
}
