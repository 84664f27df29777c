import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokenLinks, documentedFiles, headingAnchors } from './docs-links';
import { REPO_ROOT } from './output-paths';

describe('the links between the docs', () => {
  it('resolve: every relative link in the README, CONTRIBUTING, docs/ and the package READMEs names a file (and heading) that is there', () => {
    const files = documentedFiles(REPO_ROOT);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/semantics.md', 'packages/idempotency/README.md']));
    expect(brokenLinks(REPO_ROOT, files)).toEqual([]);
  });

  it('are reported when a file or a heading is missing, and never inside code', () => {
    const root = mkdtempSync(join(tmpdir(), 'docs-links-'));
    try {
      mkdirSync(join(root, 'docs'));
      writeFileSync(join(root, 'docs/page.md'), '# A page\n\n## Choosing a store: `RedisStore`\n');
      writeFileSync(
        join(root, 'README.md'),
        [
          '[ok](docs/page.md#choosing-a-store-redisstore) [self](#the-readme) [web](https://example.com/x.md)',
          '# The README',
          '[gone](docs/gone.md) [no heading](docs/page.md#nowhere) ![image](docs/missing.png)',
          '```md\n[in code](docs/also-gone.md)\n```',
          '`[inline code](docs/inline-gone.md)`',
        ].join('\n\n'),
      );
      expect(brokenLinks(root, documentedFiles(root))).toEqual([
        { file: 'README.md', target: 'docs/gone.md', reason: 'no such file' },
        { file: 'README.md', target: 'docs/page.md#nowhere', reason: 'no such heading' },
        { file: 'README.md', target: 'docs/missing.png', reason: 'no such file' },
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("gives headings GitHub's anchors, numbering repeats", () => {
    expect([...headingAnchors('# Traces: the key, shown as one\n## Tests\n## Tests\n### `./nest` entry')]).toEqual([
      'traces-the-key-shown-as-one',
      'tests',
      'tests-1',
      'nest-entry',
    ]);
  });
});
