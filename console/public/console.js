// @ts-check
/**
 * The console's page: sends the controls to the JSON API and draws every
 * snapshot the server pushes (Server-Sent Events). The server holds the
 * state; this page only shows it, so a reload or a second tab shows the same.
 */
import { byId } from './elements.js';
import { drawCheckout } from './ledger-view.js';
import { drawWriteUp } from './write-up-table.js';

/** @typedef {import('../src/snapshot').Snapshot} Snapshot */
/** @typedef {import('../src/faults').FaultChoice} FaultChoice */

const form = byId('controls', HTMLFormElement);
const status = byId('status', HTMLElement);
const clicks = byId('clicks', HTMLInputElement);
const buttons = {
  pay: byId('pay', HTMLButtonElement),
  again: byId('again', HTMLButtonElement),
  double: byId('double', HTMLButtonElement),
  writeUp: byId('write-up', HTMLButtonElement),
};
/** @type {Snapshot | undefined} */
let latest;

/** @returns {import('@idempotency-chain/scenarios').Policy} */
function policy() {
  const checked = form.querySelector('input[name="policy"]:checked');
  return /** @type {import('@idempotency-chain/scenarios').Policy} */ (checked instanceof HTMLInputElement ? checked.value : 'none');
}

/** @returns {FaultChoice} */
function faults() {
  const data = new FormData(form);
  return {
    slowFirstAttempt: data.has('slowFirstAttempt'),
    lostReplies: /** @type {FaultChoice['lostReplies']} */ (data.getAll('lostReply').map(String)),
    paymentsCrash: data.has('paymentsCrash'),
    storeDown: data.has('storeDown'),
  };
}

/** @param {string} text */
function say(text) {
  if (status.textContent !== text) status.textContent = text;
}

/**
 * POST `body` to `path`; says what went wrong when the console refuses.
 * @param {string} path
 * @param {unknown} body
 */
async function send(path, body) {
  try {
    const response = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    });
    if (!response.ok) {
      const problem = await response.json().catch(() => ({}));
      say(`Not now: ${problem.detail ?? response.statusText}`);
    }
  } catch (error) {
    say(`The console does not answer (${error instanceof Error ? error.message : error}).`);
  }
}

/**
 * A button that acts only when the console is free. It stays focusable while
 * busy (aria-disabled, not disabled), so keyboard focus is never thrown away.
 * @param {HTMLButtonElement} button
 * @param {() => unknown} action
 */
function onPress(button, action) {
  button.addEventListener('click', () => {
    if (button.getAttribute('aria-disabled') === 'true') {
      say(latest?.busy ? `Wait: ${latest.activity}.` : 'Press Pay first.');
      return;
    }
    void action();
  });
}

onPress(buttons.pay, () => send('/api/checkouts', { mode: 'pay', policy: policy(), faults: faults() }));
onPress(buttons.again, () => send('/api/checkouts', { mode: 'again', faults: faults() }));
onPress(buttons.double, () => {
  if (!clicks.reportValidity()) return undefined;
  return send('/api/checkouts', { mode: 'double-click', policy: policy(), clicks: clicks.valueAsNumber, faults: faults() });
});
onPress(buttons.writeUp, () => send('/api/write-up', {}));
clicks.addEventListener('input', () => {
  byId('clicks-shown', HTMLElement).textContent = Number.isInteger(clicks.valueAsNumber) ? String(clicks.valueAsNumber) : 'N';
});
// A policy's services start when it is chosen, so its first press does not wait for them.
form.addEventListener('change', (event) => {
  if (event.target instanceof HTMLInputElement && event.target.name === 'policy') void send('/api/labs', { policy: policy() });
});
form.addEventListener('submit', (event) => event.preventDefault());

const LAB_WORDS = { stopped: '', starting: 'starting…', ready: 'ready', failed: 'failed to start' };

/** @param {Snapshot} snapshot */
function drawControls(snapshot) {
  for (const badge of document.querySelectorAll('.lab-state')) {
    if (!(badge instanceof HTMLElement)) continue;
    const lab = snapshot.labs[/** @type {keyof Snapshot['labs']} */ (badge.dataset.policy)];
    badge.textContent = lab ? LAB_WORDS[lab.state] : '';
    badge.dataset.state = lab?.state ?? '';
    badge.title = lab?.state === 'failed' ? lab.error : '';
  }
  const busy = Boolean(snapshot.busy) || !snapshot.store;
  for (const button of Object.values(buttons)) button.setAttribute('aria-disabled', String(busy));
  if (!snapshot.current || snapshot.current.title.startsWith('write-up')) buttons.again.setAttribute('aria-disabled', 'true');
  if (snapshot.busy) form.setAttribute('aria-busy', 'true');
  else form.removeAttribute('aria-busy');
  const store = snapshot.store;
  byId('store-line', HTMLElement).textContent = store
    ? `Store: ${store.kind}, ${store.note}${store.down ? '. The idempotency store is DOWN.' : '.'}`
    : 'Choosing a store…';
  const storeDown = form.elements.namedItem('storeDown');
  if (storeDown instanceof HTMLInputElement) storeDown.disabled = Boolean(store?.outageUnavailable);
  byId('store-down-why', HTMLElement).textContent = store?.outageUnavailable ? `Not available here: ${store.outageUnavailable}.` : '';
  say(snapshot.activity.charAt(0).toUpperCase() + snapshot.activity.slice(1) + '.');
}

/** @param {Snapshot} snapshot */
function draw(snapshot) {
  latest = snapshot;
  drawControls(snapshot);
  drawCheckout(snapshot.current);
  drawWriteUp(snapshot.writeUp);
}

const events = new EventSource('/api/events');
events.addEventListener('snapshot', (event) => draw(JSON.parse(/** @type {MessageEvent<string>} */ (event).data)));
events.addEventListener('error', () => say('Lost the connection to the console; reconnecting…'));
// The policy the browser restored (after a reload) gets its services started too.
void send('/api/labs', { policy: policy() });
