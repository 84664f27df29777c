import type { FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The page's files (next to `dist/` and `src/`), the only files served. */
const PAGE_DIR = join(__dirname, '..', 'public');

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
  '/diagram.css': { file: 'diagram.css', type: 'text/css; charset=utf-8' },
  '/console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
  '/elements.js': { file: 'elements.js', type: 'text/javascript; charset=utf-8' },
  '/ledger-view.js': { file: 'ledger-view.js', type: 'text/javascript; charset=utf-8' },
  '/diagram.js': { file: 'diagram.js', type: 'text/javascript; charset=utf-8' },
  '/write-up-table.js': { file: 'write-up-table.js', type: 'text/javascript; charset=utf-8' },
};

/** Only the page's own files and its event stream: no inline script or style, no other origin. */
const CSP = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Serve the page: its fixed files, read from disk on each request (so an
 * edited page needs a reload, not a restart), nothing else from the folder.
 */
export function servePage(app: FastifyInstance): void {
  for (const [route, { file, type }] of Object.entries(FILES)) {
    app.get(route, async (_request, reply) =>
      reply
        .type(type)
        .header('cache-control', 'no-cache')
        .header('content-security-policy', CSP)
        .header('x-content-type-options', 'nosniff')
        .send(await readFile(join(PAGE_DIR, file))),
    );
  }
}
