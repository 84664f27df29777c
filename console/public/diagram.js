// @ts-check
/**
 * The sequence diagram, drawn as an ordered list: one row per step, on four
 * lifelines (CSS columns). Arrows only ever join neighbours, so a row is a
 * lane (caller-gateway, gateway-orders, orders-payments) and a direction.
 * A list reads in order with a screen reader; each row says who spoke to whom.
 */

/** @typedef {import('@idempotency-chain/scenarios').SequenceStep} SequenceStep */

/** @type {Record<SequenceStep['from'], number>} */
const COLUMN = { Caller: 1, Gateway: 2, Orders: 3, Payments: 4 };

const SPOKEN = { request: 'to', answer: 'answers', lost: 'never hears back from', charge: 'writes' };

/** @param {SequenceStep} step */
function identity(step) {
  return `${step.kind}|${step.from}|${step.to}|${step.at}|${step.text}`;
}

/**
 * @param {SequenceStep} step
 * @param {boolean} fresh drawn for the first time (animated unless the user prefers reduced motion)
 */
function row(step, fresh) {
  const item = document.createElement('li');
  const from = COLUMN[step.from];
  const to = COLUMN[step.to];
  item.className = `step ${step.kind}${fresh ? ' fresh' : ''}${step.replayed ? ' replayed' : ''}`;
  if (step.kind === 'charge') {
    item.classList.add('note');
  } else {
    item.classList.add(`lane-${Math.min(from, to)}`, to > from ? 'rightward' : 'leftward');
  }
  // A lost reply is drawn from the hop that gave up: the arrow comes back to it with nothing on it.
  const who = document.createElement('span');
  who.className = 'visually-hidden';
  who.textContent =
    step.kind === 'charge'
      ? 'Payments: '
      : step.kind === 'lost'
        ? `${step.to} ${SPOKEN.lost} ${step.from}: `
        : `${step.from} ${SPOKEN[step.kind]} ${step.to}: `;
  const label = document.createElement('span');
  label.className = 'label';
  label.textContent = step.text.replace(/ replayed after/, ' after');
  if (step.replayed) {
    const badge = document.createElement('span');
    badge.className = 'badge';
    badge.textContent = 'replayed';
    label.append(' ', badge);
  }
  const arrow = document.createElement('span');
  arrow.className = 'arrow';
  arrow.setAttribute('aria-hidden', 'true');
  item.append(who, label, arrow);
  return item;
}

/**
 * Draw `steps` into `list`, marking the rows that were not there before.
 * @param {HTMLOListElement} list
 * @param {SequenceStep[]} steps
 * @param {Set<string>} seen identities drawn so far (updated here)
 */
export function drawDiagram(list, steps, seen) {
  const rows = steps.map((step) => {
    const id = identity(step);
    const fresh = !seen.has(id);
    seen.add(id);
    return row(step, fresh);
  });
  list.replaceChildren(...rows);
}
