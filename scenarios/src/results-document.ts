/**
 * RESULTS.md as a set of sections, one per scenario, each between two
 * markers so that a run of a selection can replace its own sections and
 * leave every other one as the run that wrote it left it.
 */

const START = /^<!-- section (\S+) -->$/;

function startMarker(id: string): string {
  return `<!-- section ${id} -->`;
}

function endMarker(id: string): string {
  return `<!-- /section ${id} -->`;
}

const HEADER = [
  '# Results',
  '',
  'Written by `npm run scenarios` (`turbo run scenarios`) and `npm run chaos` (the randomized fault soak, from',
  '`scenarios/chaos.json`); do not edit by hand. Each section names the run that wrote it: a run of a selection',
  '(`SCENARIOS=write-up,double-click`) rewrites its own sections and charts and keeps the others.',
  '',
  '**Reading the diagrams.** Each arrow is one attempt of one hop; the request and its answer (or its loss) both name the',
  "attempt and the first six hex digits of its key's hash (`no key` when none was sent). Times are milliseconds since",
  "the caller's first request. A charge's fencing epoch is shown relative to the first claim of the run (`epoch +632",
  "since the first claim`): the store takes an epoch from its clock in milliseconds (one more than the key's last when",
  'two claims fall within the same millisecond), so +632 is a claim about 632 ms after the first one. Only their order',
  'matters: the ledger refuses a write whose epoch is older than one it has already seen for the same record.',
].join('\n');

const FAILURES_INTRO = ['## Beyond the write-up', '', 'Each failure run twice or more on a fresh lab: the naive approach, then ours.'].join(
  '\n',
);

/** The sections of an existing RESULTS.md, by id, markers included; none when it has no markers. */
export function parseSections(markdown: string): Map<string, string> {
  const sections = new Map<string, string>();
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const id = START.exec(lines[i] as string)?.[1];
    if (!id) continue;
    const end = lines.indexOf(endMarker(id), i + 1);
    if (end < 0) continue; // cut short by hand: not a section this runner can keep
    sections.set(id, lines.slice(i, end + 1).join('\n'));
    i = end;
  }
  return sections;
}

/** A section's body between its markers. */
export function section(id: string, body: string): string {
  return [startMarker(id), body, endMarker(id)].join('\n');
}

/** Sections that carry their own top heading: the failures' heading goes before none of them. */
const OWN_HEADING = new Set(['write-up', 'chaos']);

/**
 * The whole document: the header, then every section there is, in `order`
 * (the write-up first, then the failures under their own heading, then the soak).
 */
export function resultsDocument(sections: Map<string, string>, order: readonly string[]): string {
  const present = order.filter((id) => sections.has(id));
  const parts = [HEADER];
  for (const id of present) {
    if (!OWN_HEADING.has(id) && !parts.includes(FAILURES_INTRO)) parts.push(FAILURES_INTRO);
    parts.push(sections.get(id) as string);
  }
  return `${parts.join('\n\n')}\n`;
}
