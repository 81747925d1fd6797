// The pixel editor: cells in SVG, click and drag to flip, mirror images, ports and the design region.

import { $, SVGNS, el, state } from './core.js';
import { edited } from './runs.js';

export function drawEditor() {
  const svg = $('editor');
  svg.textContent = '';
  const { nx, ny } = state;
  svg.setAttribute('viewBox', `-1 -1 ${nx + 2} ${ny + 2}`);
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      const k = i + nx * j, r = document.createElementNS(SVGNS, 'rect');
      r.setAttribute('x', i);
      r.setAttribute('y', ny - 1 - j);
      r.setAttribute('width', 1);
      r.setAttribute('height', 1);
      r.dataset.k = k;
      r.id = 'cell-' + k;
      svg.appendChild(r);
      paintCell(k);
    }
  }
  drawPorts(svg);
  drawRegion();
}

export function paintCell(k) {
  const r = document.getElementById('cell-' + k);
  if (r) r.setAttribute('class', 'cell ' + (state.map[k] ? 'metal' : 'empty') + (state.fixed[k] ? ' fixed' : ''));
}

export function drawPorts(svg) {
  const { nx, ny } = state;
  (state.project.ports || []).forEach((port, n) => {
    const cells = state.portCells[n];
    if (!cells || !cells.length) return;
    const i = cells[0] % nx, j = Math.floor(cells[0] / nx);
    const t = document.createElementNS(SVGNS, 'text');
    const x = port.side === 'left' ? -0.9 : port.side === 'right' ? nx + 0.1 : i;
    const y = port.side === 'bottom' ? ny + 0.8 : port.side === 'top' ? -0.2 : ny - j - 0.2;
    t.setAttribute('x', x);
    t.setAttribute('y', y);
    t.setAttribute('class', 'port');
    t.textContent = port.name || String(n + 1);
    svg.appendChild(t);
  });
}

// A cell and its mirror partners (the editor's symmetry).
export function partners(k) {
  const { nx, ny } = state, i = k % nx, j = Math.floor(k / nx), m = $('mirror').value;
  const set = new Set([k]);
  if (m === 'x' || m === 'xy') set.add(nx - 1 - i + nx * j);
  if (m === 'y' || m === 'xy') set.add(i + nx * (ny - 1 - j));
  if (m === 'xy') set.add(nx - 1 - i + nx * (ny - 1 - j));
  const region = state.liveOn ? regionMask() : null;
  return [...set].filter((c) => !state.fixed[c] && (!region || region[c] === '1'));
}

let drag = null;   // {value: what the drag paints, changed: cells changed}

export function setupEditor() {
  const svg = $('editor');
  const cellAt = (ev) => {
    const el = document.elementFromPoint(ev.clientX, ev.clientY);
    return el && el.dataset && el.dataset.k !== undefined ? +el.dataset.k : -1;
  };
  const paint = (k) => {
    if (k < 0 || state.fixed[k]) return;
    for (const c of partners(k)) {
      if (state.map[c] === drag.value) continue;
      state.map[c] = drag.value;
      drag.changed.push(c);
      paintCell(c);
    }
  };
  svg.addEventListener('pointerdown', (ev) => {
    const k = cellAt(ev);
    if (k < 0 || state.fixed[k] || state.busy && !state.liveOn) return;
    drag = { value: state.map[k] ? 0 : 1, changed: [] };
    svg.setPointerCapture(ev.pointerId);
    paint(k);
  });
  svg.addEventListener('pointermove', (ev) => { if (drag) paint(cellAt(ev)); });
  const end = () => {
    if (!drag) return;
    const changed = drag.changed;
    drag = null;
    if (changed.length) edited(changed);
  };
  svg.addEventListener('pointerup', end);
  svg.addEventListener('pointercancel', end);
}

// A first guess the user edits: the widest run of empty columns (the gap
// between launches), else the middle third of the board.
export function setDefaultRegion() {
  const { nx, ny } = state;
  let best = [Math.floor(nx / 3), Math.ceil(2 * nx / 3) - 1], run = -1;
  for (let i = 0; i <= nx; i++) {
    let empty = i < nx;
    for (let j = 0; empty && j < ny; j++) empty = !state.map[i + nx * j] && !state.fixed[i + nx * j];
    if (empty && run < 0) run = i;
    if (!empty && run >= 0) {
      if (i - run > 1 && (best.found === undefined || i - run > best[1] - best[0] + 1)) { best = [run, i - 1]; best.found = true; }
      run = -1;
    }
  }
  $('reg-c0').value = best[0]; $('reg-c1').value = best[1];
  $('reg-r0').value = 0; $('reg-r1').value = ny - 1;
  drawRegion();
}

export function regionMask() {
  const { nx, ny } = state, c0 = +$('reg-c0').value, c1 = +$('reg-c1').value, r0 = +$('reg-r0').value, r1 = +$('reg-r1').value;
  let s = '';
  for (let j = 0; j < ny; j++) for (let i = 0; i < nx; i++) s += i >= c0 && i <= c1 && j >= r0 && j <= r1 ? '1' : '0';
  return s;
}

export function drawRegion() {
  const svg = $('editor');
  const old = svg.querySelector('.region');
  if (old) old.remove();
  if ($('design-tab').hidden && !state.liveOn) return;
  const c0 = +$('reg-c0').value, c1 = +$('reg-c1').value, r0 = +$('reg-r0').value, r1 = +$('reg-r1').value;
  el('rect', { x: c0, y: state.ny - 1 - r1, width: c1 - c0 + 1, height: r1 - r0 + 1, class: 'region' }, svg);
}
