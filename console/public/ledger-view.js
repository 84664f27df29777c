// @ts-check
/**
 * The current checkout: its ledger (the count, in big), the caller's answers
 * with their replays, what else happened, and its sequence diagram.
 */
import { drawDiagram } from './diagram.js';
import { byId } from './elements.js';

/** @typedef {import('../src/snapshot').CheckoutView} CheckoutView */

const ledger = byId('ledger', HTMLElement);
const diagram = byId('diagram', HTMLOListElement);
/** @type {Set<string>} */
const drawn = new Set();
let drawnAction = -1;

/** @param {string} name e.g. `orders` -> `orders'`, `gateway` -> `gateway's` */
function possessive(name) {
  return name.endsWith('s') ? `${name}'` : `${name}'s`;
}

/**
 * How many presses got what, e.g. `1 × 502 Bad Gateway, 19 × 201 Created (18 replayed)`: twenty answers at a glance.
 * @param {CheckoutView['answers']} answers
 */
function tally(answers) {
  /** @type {Map<string, { count: number; replayed: number }>} */
  const byText = new Map();
  for (const answer of answers) {
    const key = answer.pending ? 'waiting' : answer.text.replace(/ after \d+ ms$/, '');
    const entry = byText.get(key) ?? { count: 0, replayed: 0 };
    entry.count += 1;
    if (answer.replayedBy) entry.replayed += 1;
    byText.set(key, entry);
  }
  return [...byText].map(([text, { count, replayed }]) => `${count} × ${text}${replayed ? ` (${replayed} replayed)` : ''}`).join(', ');
}

const PHASE_WORDS = { running: 'in flight…', settling: 'settling…', settled: 'settled', failed: 'failed' };

/** @param {CheckoutView | undefined} current */
export function drawCheckout(current) {
  ledger.dataset.phase = current?.phase ?? '';
  ledger.dataset.action = current ? String(current.action) : '';
  byId('checkout-title', HTMLElement).textContent = current ? current.title : 'Nothing pressed yet.';
  const count = current?.charges.length ?? 0;
  byId('charge-count', HTMLElement).textContent = String(count);
  byId('charge-word', HTMLElement).textContent = count === 1 ? 'charge' : 'charges';
  byId('phase', HTMLElement).textContent = current ? PHASE_WORDS[current.phase] : '';
  const origin = current?.origin ?? 0;
  byId('charges', HTMLOListElement).replaceChildren(
    ...(current?.charges ?? []).map((charge) => {
      const item = document.createElement('li');
      item.textContent = `${charge.chargeId.slice(0, 14)}… at +${Date.parse(charge.at) - origin} ms`;
      return item;
    }),
  );
  const answers = current?.answers ?? [];
  byId('answers-tally', HTMLElement).textContent = answers.length > 1 ? tally(answers) : '';
  byId('answers', HTMLOListElement).replaceChildren(
    ...answers.map((answer) => {
      const item = document.createElement('li');
      item.dataset.replayed = String(Boolean(answer.replayedBy));
      item.dataset.pending = String(answer.pending);
      const label = document.createElement('strong');
      label.textContent = `${answer.label}: `;
      item.append(label, answer.text);
      if (answer.replayedBy) {
        const badge = document.createElement('span');
        badge.className = 'badge';
        badge.textContent = `replayed from ${possessive(answer.replayedBy)} store`;
        item.append(' ', badge);
      }
      return item;
    }),
  );
  byId('notes', HTMLUListElement).replaceChildren(
    ...(current?.notes ?? []).map((note) => {
      const item = document.createElement('li');
      item.textContent = note;
      return item;
    }),
  );
  // A new checkout starts a new diagram: everything in it is new.
  if (!current || current.action !== drawnAction) drawn.clear();
  drawnAction = current?.action ?? -1;
  drawDiagram(diagram, current?.steps ?? [], drawn);
}
