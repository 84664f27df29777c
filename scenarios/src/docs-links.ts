import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** A relative link in a Markdown file that points at nothing. */
export interface BrokenLink {
  /** The file the link is in, relative to the root. */
  file: string;
  target: string;
  reason: 'no such file' | 'no such heading';
}

/**
 * The documents a reader follows links through: the README, CONTRIBUTING,
 * every page under docs/ and every package's README.
 */
export function documentedFiles(root: string): string[] {
  const inFolder = (folder: string, pick: (name: string) => string | undefined) =>
    existsSync(join(root, folder))
      ? readdirSync(join(root, folder))
          .map(pick)
          .filter((file): file is string => file !== undefined && existsSync(join(root, file)))
      : [];
  return [
    'README.md',
    'CONTRIBUTING.md',
    ...inFolder('docs', (name) => (name.endsWith('.md') ? `docs/${name}` : undefined)),
    ...inFolder('packages', (name) => `packages/${name}/README.md`),
  ].filter((file) => existsSync(join(root, file)));
}

/** Every relative link of `files` (paths under `root`) whose file, or heading, is not there. */
export function brokenLinks(root: string, files: string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  for (const file of files) {
    const path = resolve(root, file);
    for (const target of links(readFileSync(path, 'utf8'))) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:: not this tree's to check
      const [pathPart = '', anchor] = target.split('#', 2);
      const linked = pathPart === '' ? path : resolve(dirname(path), decodeURIComponent(pathPart));
      if (!existsSync(linked)) broken.push({ file, target, reason: 'no such file' });
      else if (anchor && linked.endsWith('.md') && statSync(linked).isFile() && !headingAnchors(readFileSync(linked, 'utf8')).has(anchor)) {
        broken.push({ file, target, reason: 'no such heading' });
      }
    }
  }
  return broken.map((link) => ({ ...link, file: relative(root, resolve(root, link.file)) }));
}

/** Markdown outside fenced code blocks, where a `[x](y)` is text, not a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** The targets of the inline links and images of a document. */
function links(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string);
}

/** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (match[1] as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
