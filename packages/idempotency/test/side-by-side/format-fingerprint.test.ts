import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CURRENT, FORMAT, capturedRelease } from './releases';
import { recordFormat, type RecordFormat } from './record-format';

/**
 * The rule of rolling deploys, made mechanical: a deploy runs the release
 * before and the release after side by side on one store, so a change of
 * what a record is (a Redis script, a PostgreSQL statement or migration,
 * the key a record is kept under) ships only with the release before it
 * captured and run beside it on one key (side-by-side.test.ts). This check
 * fails on such a change until that is done, and says how.
 */
describe('record format', () => {
  it('is the format recorded in test/side-by-side/format.json, which names the releases run beside it', () => {
    const found = recordFormat(CURRENT.load);
    const changed = (Object.keys(found) as (keyof RecordFormat)[]).filter((part) => found[part] !== FORMAT.current[part]);
    if (changed.length > 0) {
      throw new Error(
        `The record format changed (${changed.join(', ')}): during a rolling deploy this release and the one before it ` +
          'serve one store, and a record one of them cannot read is a key executed twice. Before merging:\n' +
          '  1. capture the release before the change (the last commit on main with the old format):\n' +
          '       node packages/idempotency/scripts/capture-release.mjs <commit> <name>\n' +
          '  2. add it to "sideBySide" in test/side-by-side/format.json, with its "commit" and its "format" (this check prints it),\n' +
          '  3. set "current" there to\n' +
          `${JSON.stringify(found, null, 2)}\n` +
          '  4. make side-by-side.test.ts pass: one charge per key, whichever release claims, waits or replays.\n' +
          'If the two cannot share a store, say so in the README ("Record format versions") and give the new format a store or prefix of its own.',
      );
    }
  });

  it.each(FORMAT.sideBySide.map((entry) => [entry.release, entry] as const))('is run beside %s, captured as its own code', (_, entry) => {
    expect(existsSync(join(__dirname, 'releases', `${entry.release}.cjs`)), `releases/${entry.release}.cjs`).toBe(true);
    const release = capturedRelease(entry.release);
    expect(release.commit).toBe(entry.commit);
    expect(recordFormat(release.load)).toEqual(entry.format);
  });

  it('runs beside at least the release before the newest format change', () => {
    expect(FORMAT.sideBySide.length).toBeGreaterThan(0);
    expect(FORMAT.sideBySide.at(-1)?.format).not.toEqual(FORMAT.current);
  });
});
