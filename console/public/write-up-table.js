// @ts-check
/** The write-up's table, a row per policy as each run ends, the one being played marked running. */
import { byId } from './elements.js';

/** @typedef {import('../src/snapshot').Snapshot} Snapshot */

/** @param {Snapshot['writeUp']} writeUp */
export function drawWriteUp(writeUp) {
  const section = byId('write-up-section', HTMLElement);
  section.hidden = !writeUp;
  if (!writeUp) return;
  section.dataset.phase = writeUp.phase;
  const rows = writeUp.rows.map((row) => {
    const tr = document.createElement('tr');
    tr.dataset.policy = row.policy;
    const cells = [row.policy, String(row.charges), String(row.expected), row.caller, row.later];
    cells.forEach((text, index) => {
      const cell = document.createElement(index === 0 ? 'th' : 'td');
      if (index === 0) cell.setAttribute('scope', 'row');
      cell.textContent = text;
      if (index === 1) cell.className = row.charges === row.expected ? 'charges as-expected' : 'charges unexpected';
      tr.append(cell);
    });
    return tr;
  });
  if (writeUp.policy) {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.setAttribute('scope', 'row');
    th.textContent = writeUp.policy;
    const td = document.createElement('td');
    td.colSpan = 4;
    td.textContent = 'running…';
    tr.append(th, td);
    rows.push(tr);
  }
  if (writeUp.error) {
    const tr = document.createElement('tr');
    const td = document.createElement('td');
    td.colSpan = 5;
    td.textContent = `Failed: ${writeUp.error}`;
    tr.append(td);
    rows.push(tr);
  }
  byId('write-up-rows', HTMLTableSectionElement).replaceChildren(...rows);
}
