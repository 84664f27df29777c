import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What an HTTP-only team deletes from payments: the folder of the queue path, and the one import of its module. */
const QUEUE_FOLDER = join('src', 'queue');
const ROOT_MODULE = join('src', 'payments.module.ts');

/**
 * Take the queue out of a copy of apps/payments as its README tells an
 * HTTP-only team to: delete `src/queue/` and the lines of `payments.module.ts`
 * that name `ChargeQueueModule` (its import, and its entry in `imports`
 * with the comment above it). Nothing else is touched.
 *
 * @returns the lines taken out of the root module.
 * @throws when the root module does not name the queue's module exactly twice.
 */
export async function dropQueueFolder(folder: string): Promise<string[]> {
  const file = join(folder, ROOT_MODULE);
  const lines = (await readFile(file, 'utf8')).split('\n');
  const naming = lines.flatMap((line, index) => (line.includes('ChargeQueueModule') ? [index] : []));
  if (naming.length !== 2) throw new Error(`${ROOT_MODULE} names ChargeQueueModule ${naming.length} times, not twice (import and use)`);
  const entry = naming[1]!;
  const dropped = new Set(lines[entry - 1]?.trim().startsWith('//') ? [...naming, entry - 1] : naming);
  await writeFile(file, lines.filter((_, index) => !dropped.has(index)).join('\n'));
  await rm(join(folder, QUEUE_FOLDER), { recursive: true });
  return [...dropped].sort((a, b) => a - b).map((index) => lines[index]!.trim());
}
