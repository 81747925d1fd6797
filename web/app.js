// Solvent's browser app: the page edits a project (its JSON, with the metal
// as pixel strings) and asks the server (`solvent serve`) to sweep it, follow
// edits live and design it. All numbers come from the server; the page only
// draws them. Plain JavaScript and SVG, no libraries.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);
// This tab's id: the server keeps one project and one job per tab.
const CLIENT = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const UNIT_M = { m: 1, mm: 1e-3, um: 1e-6, 'µm': 1e-6, mil: 25.4e-6 };

const state = {
  project: null,   // the project's JSON object
  name: '',
  nx: 0, ny: 0,
  map: null,       // Uint8Array nx*ny, cell i + nx*j, j = 0 the bottom row
  fixed: null,     // cells a port sits on: never flipped
  sweep: null,     // the last sweep's answer
  live: null,      // live mode's last S
  liveOn: false,
  design: null,
  busy: false,
  sweepTimer: null,
};

// ---- the server ----------------------------------------------------------
async function api(method, path, body) {
  const opts = { method, headers: { 'X-Solvent-Client': CLIENT } };
  if (body !== undefined) {
    opts.headers['Content-Type'] = 'application/json';
    opts.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = null; }
  return { status: r.status, ok: r.ok, data };
}

function showError(msg) {
  const e = $('error');
  e.textContent = msg || '';
  e.hidden = !msg;
}

function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

// Follow the tab's job until it ends; onProgress sees each answer.
async function followJob(onProgress) {
  for (;;) {
    const r = await api('GET', '/api/job');
    if (!r.ok) return { state: 'failed', message: r.data && r.data.error };
    onProgress(r.data);
    if (r.data.state !== 'running') return r.data;
    await sleep(50);
  }
}

// ---- the project ---------------------------------------------------------
function setProject(name, project) {
  state.project = project;
  state.name = name;
  state.nx = project.grid.nx;
  state.ny = project.grid.ny;
  state.map = new Uint8Array(state.nx * state.ny);
  project.pixels.forEach((row, r) => {
    const j = state.ny - 1 - r;
    for (let i = 0; i < state.nx; i++) state.map[i + state.nx * j] = row[i] === '#' ? 1 : 0;
  });
  state.fixed = portCells(project);
  $('project-name').textContent = name || project.title || '';
  fillForm();
  drawEditor();
  setDefaultRegion();
  updateDownloads();
}

// The cells the ports sit on (the first column or row inside each port's
// plane over its span): the launches, shown fixed and never flipped.
function portCells(p) {
  const fixed = new Uint8Array(state.nx * state.ny);
  const g = p.grid, o = g.origin || [0, 0];
  for (const port of p.ports || []) {
    const horiz = port.side === 'left' || port.side === 'right';
    const span = horiz ? port.y : port.x, at = horiz ? port.x : port.y;
    if (!Array.isArray(span)) continue;
    const d = horiz ? g.dx : g.dy, e = horiz ? g.dy : g.dx;
    const o1 = horiz ? o[0] : o[1], o2 = horiz ? o[1] : o[0];
    let line = Math.round((at - o1) / d);
    if (port.side === 'right' || port.side === 'top') line -= 1;
    const a = Math.round((span[0] - o2) / e), b = Math.round((span[1] - o2) / e);
    for (let k = a; k < b; k++) {
      const i = horiz ? line : k, j = horiz ? k : line;
      if (i >= 0 && i < state.nx && j >= 0 && j < state.ny) fixed[i + state.nx * j] = 1;
    }
  }
  return fixed;
}

function fillForm() {
  const p = state.project;
  $('units').textContent = '(' + p.units + ')';
  $('eps_r').value = p.substrate.eps_r;
  $('tan_delta').value = p.substrate.tan_delta || 0;
  $('thickness').value = p.substrate.thickness;
  $('metal_t').value = (p.metal && p.metal.thickness) || 0;
  $('sigma').value = p.metal && p.metal.conductivity !== undefined ? p.metal.conductivity : '';
  $('grid-info').textContent = `${state.nx} × ${state.ny} cells of ${p.grid.dx} × ${p.grid.dy} ${p.units}`;
  const s = p.sweep || {};
  const ghz = { Hz: 1e-9, kHz: 1e-6, MHz: 1e-3, GHz: 1, THz: 1e3 }[s.unit || 'Hz'] || 1e-9;
  $('start').value = s.start !== undefined ? +(s.start * ghz).toPrecision(12) : 1;
  $('stop').value = s.stop !== undefined ? +(s.stop * ghz).toPrecision(12) : 10;
  $('points').value = s.points || 101;
}

// The project as the form and the editor say, ready for the server.
function currentProject() {
  const p = JSON.parse(JSON.stringify(state.project));
  p.substrate.eps_r = +$('eps_r').value;
  p.substrate.tan_delta = +$('tan_delta').value;
  p.substrate.thickness = +$('thickness').value;
  p.metal = p.metal || {};
  const sig = $('sigma').value.trim();
  if (sig === '') delete p.metal.conductivity; else p.metal.conductivity = +sig;
  const t = +$('metal_t').value;
  if (t > 0) p.metal.thickness = t; else delete p.metal.thickness;
  p.sweep = { start: +$('start').value, stop: +$('stop').value, points: Math.round(+$('points').value), unit: 'GHz' };
  p.pixels = pixelRows();
  return p;
}

function pixelRows() {
  const rows = [];
  for (let j = state.ny - 1; j >= 0; j--) {
    let s = '';
    for (let i = 0; i < state.nx; i++) s += state.map[i + state.nx * j] ? '#' : '.';
    rows.push(s);
  }
  return rows;
}

function band() {
  return { start_hz: +$('start').value * 1e9, stop_hz: +$('stop').value * 1e9, points: Math.round(+$('points').value) };
}

async function sendProject() {
  const r = await api('PUT', '/api/project', currentProject());
  if (!r.ok) throw new Error(r.data ? r.data.error : 'the server did not answer');
  state.project = r.data.project;
}

// ---- the pixel editor ----------------------------------------------------
function drawEditor() {
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

function paintCell(k) {
  const r = document.getElementById('cell-' + k);
  if (r) r.setAttribute('class', 'cell ' + (state.map[k] ? 'metal' : 'empty') + (state.fixed[k] ? ' fixed' : ''));
}

function drawPorts(svg) {
  const { nx, ny } = state;
  (state.project.ports || []).forEach((port, n) => {
    let i = -1, j = -1;
    for (let k = 0; k < nx * ny; k++) if (state.fixed[k] && portCellOf(port, k)) { i = k % nx; j = Math.floor(k / nx); break; }
    if (i < 0) return;
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

function portCellOf(port, k) {
  const i = k % state.nx;
  if (port.side === 'left') return i === 0 || state.nx < 2;
  if (port.side === 'right') return i === state.nx - 1;
  const j = Math.floor(k / state.nx);
  return port.side === 'bottom' ? j === 0 : j === state.ny - 1;
}

// A cell and its mirror partners (the editor's symmetry).
function partners(k) {
  const { nx, ny } = state, i = k % nx, j = Math.floor(k / nx), m = $('mirror').value;
  const set = new Set([k]);
  if (m === 'x' || m === 'xy') set.add(nx - 1 - i + nx * j);
  if (m === 'y' || m === 'xy') set.add(i + nx * (ny - 1 - j));
  if (m === 'xy') set.add(nx - 1 - i + nx * (ny - 1 - j));
  const region = state.liveOn ? regionMask() : null;
  return [...set].filter((c) => !state.fixed[c] && (!region || region[c] === '1'));
}

let drag = null;   // {value: what the drag paints, changed: cells changed}
function setupEditor() {
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

// After an edit: live S at once, a full sweep when editing pauses.
async function edited(cells) {
  updateDownloads();
  if (!state.liveOn) return;
  clearTimeout(state.sweepTimer);
  if (state.busy) {  // the refreshing sweep: editing goes on, so it stops
    await api('DELETE', '/api/job');
    await followJob(() => {});
  }
  const t0 = performance.now();
  const r = await api('POST', '/api/live/flip', { cells });
  if (!r.ok) { showError(r.data.error); return; }
  state.live = r.data;
  drawPlot();
  $('live-status').textContent = `live: ${r.data.unknowns} unknowns, update ${(r.data.seconds * 1e3).toFixed(1)} ms ` +
    `(${(performance.now() - t0).toFixed(0)} ms to the plot)`;
  clearTimeout(state.sweepTimer);
  state.sweepTimer = setTimeout(() => { if (state.liveOn) runSweep(); }, 1500);
}

// ---- live mode -------------------------------------------------------------
async function startLive() {
  showError('');
  // the pixels that may flip: the design region (the fewer, the faster each update)
  const region = regionMask();
  try {
    await sendProject();
  } catch (e) { showError(e.message); $('live').checked = false; return; }
  const r = await api('POST', '/api/live', { region, points: Math.min(41, band().points) });
  if (!r.ok) { showError(r.data.error); $('live').checked = false; return; }
  clearTimeout(state.sweepTimer);
  setBusy(true);
  const end = await followJob((j) => { $('live-status').textContent = 'live: ' + (j.phase || 'starting'); });
  setBusy(false);
  if (end.state !== 'done') {
    state.liveOn = false;
    $('live').checked = false;
    $('live-status').textContent = '';
    showError('Live mode is not available for this project: ' + (end.message || end.state));
    return;
  }
  const s = await api('GET', '/api/live');
  state.live = s.data;
  state.liveOn = true;
  drawRegion();
  $('live-status').textContent = `live: ${s.data.unknowns} unknowns at ${s.data.freq_hz.length} frequencies`;
  drawPlot();
}

// ---- the sweep -------------------------------------------------------------
function setBusy(b) {
  state.busy = b;
  $('sweep').disabled = b;
  $('sweep-stop').disabled = !b;
  $('design-run').disabled = b;
  $('design-stop').disabled = !b;
}

async function runSweep() {
  if (state.busy) return;
  clearTimeout(state.sweepTimer);
  setBusy(true);
  try { await sweepSteps(); } finally { setBusy(false); }
}

// Send the project, show the memory estimate, run, follow, fetch the result.
async function sweepSteps() {
  showError('');
  try {
    await sendProject();
  } catch (e) { showError(e.message); return; }
  // the job estimates its memory before anything large and is refused by
  // the library when it would not fit: the page shows both
  $('memory').textContent = '';
  const r = await api('POST', '/api/sweep', band());
  if (!r.ok) { showError(r.data.error); return; }
  const end = await followJob((j) => {
    $('progress').value = j.fraction;
    $('phase').textContent = j.phase;
    if (j.estimate) {
      $('memory').textContent = 'memory estimate: ' + bytes(j.estimate.total) +
        (j.estimate.limit ? ' of ' + bytes(j.estimate.limit) : '');
    }
  });
  if (end.state !== 'done') {
    $('phase').textContent = end.state;
    if (end.state === 'failed') showError(end.message);
    return;
  }
  const res = await api('GET', '/api/sweep');
  state.sweep = res.data;
  $('phase').textContent = `done in ${end.seconds.toFixed(2)} s`;
  drawPlot();
  drawReport();
  updateDownloads();
}

function bytes(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let k = 0;
  while (n >= 1024 && k < u.length - 1) { n /= 1024; k++; }
  return n.toFixed(k ? 1 : 0) + ' ' + u[k];
}

function drawReport() {
  const r = state.sweep.report, t = $('report');
  const rows = [
    ['unknowns', r.unknowns], ['frequencies', r.nfreq], ['exact solves', r.exact_solves],
    ['converged', r.converged ? 'yes' : 'no (cap on exact solves)'], ['time', r.seconds.toFixed(3) + ' s'],
    ['peak memory', bytes(r.peak_bytes)], ['estimate', bytes(r.estimate_bytes)],
    ['max |S − Sᵀ|', r.reciprocity.toExponential(1)], ['largest singular value', r.max_singular.toFixed(4)],
    ['device', r.device],
  ];
  t.textContent = '';
  for (const [k, v] of rows) {
    const tr = t.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = v;
  }
}

// ---- the plot --------------------------------------------------------------
const PLOT = { x0: 60, x1: 620, y0: 20, y1: 360 };

function el(name, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// The entries plotted: S_ij with i >= j (the networks are reciprocal).
function entries(data) {
  const n = data.ports.length, out = [];
  for (let j = 1; j <= n; j++) for (let i = j; i <= n; i++) out.push(n < 10 ? `S${i}${j}` : `S${i},${j}`);
  return out;
}

function drawPlot() {
  const svg = $('plot');
  svg.textContent = '';
  const mode = document.querySelector('input[name=mode]:checked').value;
  const main = state.sweep || state.live || state.design;
  if (!main) {
    el('text', { x: 200, y: 200 }, svg, 'Press Sweep to compute S');
    return;
  }
  if (mode === 'smith') { drawSmith(svg); return; }
  const sets = [state.sweep, state.liveOn ? state.live : null, state.design].filter(Boolean);
  let fmin = Infinity, fmax = -Infinity, ymin = Infinity, ymax = -Infinity;
  for (const d of sets) {
    fmin = Math.min(fmin, d.freq_hz[0]);
    fmax = Math.max(fmax, d.freq_hz[d.freq_hz.length - 1]);
    for (const e of entries(d)) for (const v of d.s[e][mode]) if (v !== null) { ymin = Math.min(ymin, v); ymax = Math.max(ymax, v); }
  }
  if (mode === 'db') { ymin = Math.max(ymin, -80); ymax = Math.max(ymax, 0); } else { ymin = -180; ymax = 180; }
  if (fmax === fmin) { fmax = fmin + 1; }
  const step = niceStep((ymax - ymin) / 6);
  ymin = Math.floor(ymin / step) * step;
  ymax = Math.ceil(ymax / step) * step || step;
  const X = (f) => PLOT.x0 + (f - fmin) / (fmax - fmin) * (PLOT.x1 - PLOT.x0);
  const Y = (v) => PLOT.y1 - (v - ymin) / (ymax - ymin) * (PLOT.y1 - PLOT.y0);
  const fstep = niceStep((fmax - fmin) / 1e9 / 8) * 1e9;
  for (let f = Math.ceil(fmin / fstep) * fstep; f <= fmax + 1e-6 * fstep; f += fstep) {
    el('line', { x1: X(f), x2: X(f), y1: PLOT.y0, y2: PLOT.y1, class: 'gridline' }, svg);
    el('text', { x: X(f) - 10, y: PLOT.y1 + 16 }, svg, +(f / 1e9).toPrecision(4));
  }
  for (let v = ymin; v <= ymax + 1e-9; v += step) {
    el('line', { x1: PLOT.x0, x2: PLOT.x1, y1: Y(v), y2: Y(v), class: 'gridline' }, svg);
    el('text', { x: PLOT.x0 - 36, y: Y(v) + 4 }, svg, +v.toPrecision(4));
  }
  el('rect', { x: PLOT.x0, y: PLOT.y0, width: PLOT.x1 - PLOT.x0, height: PLOT.y1 - PLOT.y0, fill: 'none', class: 'axis' }, svg);
  el('text', { x: (PLOT.x0 + PLOT.x1) / 2 - 40, y: PLOT.y1 + 34 }, svg, 'frequency (GHz)');
  el('text', { x: 4, y: PLOT.y0 - 6 }, svg, mode === 'db' ? '|S| (dB)' : 'phase (°)');
  if (mode === 'db' && !$('design-tab').hidden) drawMasks(svg, X, Y, ymin, ymax);
  let legend = 0;
  const clip = (v) => Math.min(Math.max(v, ymin), ymax);
  const trace = (d, cls, label, row0 = 0) => {
    entries(d).forEach((e, n) => {
      const row = row0 + n;
      const pts = d.freq_hz.map((f, k) => (d.s[e][mode][k] === null ? null : `${X(f).toFixed(2)},${Y(clip(d.s[e][mode][k])).toFixed(2)}`)).filter(Boolean);
      el('polyline', { points: pts.join(' '), class: cls, stroke: COLORS[n % COLORS.length], 'data-entry': e }, svg);
      el('text', { x: PLOT.x1 - 80, y: PLOT.y0 + 14 + 14 * row, fill: COLORS[n % COLORS.length] }, svg, e + label);
    });
  };
  if (state.sweep) {
    trace(state.sweep, 'trace', '');
    legend = entries(state.sweep).length;
    // the exactly solved frequencies: triangles on the frequency axis
    state.sweep.freq_hz.forEach((f, k) => {
      if (!state.sweep.exact[k]) return;
      const x = X(f), y = PLOT.y1;
      el('polygon', { points: `${x},${y - 7} ${x - 4},${y} ${x + 4},${y}`, class: 'exact-marker' }, svg);
    });
  }
  // legends stack: the sweep's entries, then live mode's, then the design's
  const next = (d) => { const n = legend; legend += entries(d).length; return n; };
  if (state.liveOn && state.live) trace(state.live, 'live', ' live', next(state.live));
  if (state.design) trace(state.design, 'live', ' design', next(state.design));
}

function niceStep(x) {
  if (!(x > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(x))), m = x / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

function drawMasks(svg, X, Y, ymin, ymax) {
  for (const m of readMasks()) {
    const x0 = X(m.start * 1e9), x1 = X(m.stop * 1e9);
    const b = Math.min(Math.max(m.bound_db, ymin), ymax);
    const y0 = m.type === 'max' ? Y(ymax) : Y(b), y1 = m.type === 'max' ? Y(b) : Y(ymin);
    el('rect', { x: Math.min(x0, x1), y: y0, width: Math.abs(x1 - x0), height: Math.max(0, y1 - y0), class: 'mask' }, svg)
      .setAttribute('data-mask', m.s);
  }
}

function drawSmith(svg) {
  const cx = 320, cy = 200, R = 170;
  el('circle', { cx, cy, r: R, fill: 'none', class: 'axis' }, svg);
  el('line', { x1: cx - R, x2: cx + R, y1: cy, y2: cy, class: 'gridline' }, svg);
  for (const r of [0.2, 0.5, 1, 2, 5]) el('circle', { cx: cx + R * r / (1 + r), cy, r: R / (1 + r), fill: 'none', class: 'gridline' }, svg);
  for (const x of [0.2, 0.5, 1, 2, 5]) {
    for (const sgn of [1, -1]) {
      const rr = R / x;
      el('circle', { cx: cx + R, cy: cy - sgn * rr, r: rr, fill: 'none', class: 'gridline', 'clip-path': 'url(#smith-clip)' }, svg);
    }
  }
  const defs = el('defs', {}, svg), cp = el('clipPath', { id: 'smith-clip' }, defs);
  el('circle', { cx, cy, r: R }, cp);
  const d = state.sweep || state.live;
  const s = d.s[d.ports.length < 10 ? 'S11' : 'S1,1'];
  const pts = s.re.map((re, k) => `${(cx + R * re).toFixed(2)},${(cy - R * s.im[k]).toFixed(2)}`);
  el('polyline', { points: pts.join(' '), class: 'trace', stroke: COLORS[0], 'data-entry': 'S11' }, svg);
  el('text', { x: 10, y: 20 }, svg, 'S11 on the Smith chart');
}

// ---- downloads -------------------------------------------------------------
let blobUrls = [];
function updateDownloads() {
  blobUrls.forEach((u) => URL.revokeObjectURL(u));
  blobUrls = [];
  const blob = (text, type) => { const u = URL.createObjectURL(new Blob([text], { type })); blobUrls.push(u); return u; };
  const csv = [];
  for (let j = state.ny - 1; j >= 0; j--) {
    const row = [];
    for (let i = 0; i < state.nx; i++) row.push(state.map[i + state.nx * j]);
    csv.push(row.join(','));
  }
  $('dl-csv').href = blob(csv.join('\n') + '\n', 'text/csv');
  $('dl-json').href = blob(JSON.stringify(currentProject(), null, 1) + '\n', 'application/json');
  $('dl-gds').href = '/api/gds?client=' + CLIENT;
  $('dl-touchstone').href = '/api/sweep/touchstone?client=' + CLIENT;
  if (state.sweep) $('dl-touchstone').download = `sweep.s${state.sweep.ports.length}p`;
}

// ---- files of the served folder ---------------------------------------------
async function listFiles() {
  const r = await api('GET', '/api/files');
  if (!r.ok) return;
  const sel = $('open-file');
  for (const f of r.data.files.filter((n) => n.endsWith('.json') || n.endsWith('.csv'))) sel.appendChild(new Option(f, f));
}

// A CSV map (ny lines of nx 0/1, the top row first) drawn on the board.
async function openMap(name) {
  const r = await fetch('/api/file?name=' + encodeURIComponent(name), { headers: { 'X-Solvent-Client': CLIENT } });
  const text = await r.text();
  if (!r.ok) { showError(JSON.parse(text).error); return; }
  const rows = text.split(/\r?\n/).map((l) => l.replace(/^\ufeff/, '').trim()).filter((l) => l);
  const cells = rows.map((l) => l.split(',').map((v) => v.trim()));
  if (!state.project || cells.length !== state.ny || cells.some((c) => c.length !== state.nx)) {
    showError(`${name} is ${cells[0] ? cells[0].length : 0} × ${cells.length} cells; the board is ${state.nx} × ${state.ny}`);
    return;
  }
  if (cells.some((c) => c.some((v) => v !== '0' && v !== '1'))) { showError(`${name}: expected values 0 or 1`); return; }
  cells.forEach((c, r) => c.forEach((v, i) => { state.map[i + state.nx * (state.ny - 1 - r)] = v === '1' ? 1 : 0; }));
  for (let k = 0; k < state.nx * state.ny; k++) paintCell(k);
  updateDownloads();
}

async function openFile(name) {
  showError('');
  const r = await api('POST', '/api/open?name=' + encodeURIComponent(name));
  if (!r.ok) { showError(r.data.error); return; }
  state.sweep = state.live = state.design = null;
  state.liveOn = false;
  $('live').checked = false;
  setProject(name, r.data.project);
  drawPlot();
}

async function saveProject() {
  const name = prompt('Save as (a .json file in the served folder)', state.name || 'project.json');
  if (!name) return;
  try { await sendProject(); } catch (e) { showError(e.message); return; }
  const r = await api('PUT', '/api/file?name=' + encodeURIComponent(name), JSON.stringify(currentProject(), null, 1) + '\n');
  if (!r.ok) showError(r.data.error); else $('phase').textContent = 'saved ' + name;
}

// ---- the design tab -----------------------------------------------------------
function addMask(m) {
  m = m || { s: 'S21', type: 'min', start: 0.5, stop: 2, bound_db: -1 };
  const tr = $('masks').tBodies[0].insertRow();
  const inp = (v, cls) => { const i = document.createElement('input'); i.value = v; i.className = cls; tr.insertCell().appendChild(i); return i; };
  inp(m.s, 'm-s');
  const sel = document.createElement('select');
  sel.className = 'm-type';
  sel.append(new Option('max', 'max'), new Option('min', 'min'));
  sel.value = m.type;
  tr.insertCell().appendChild(sel);
  inp(m.start, 'm-start'); inp(m.stop, 'm-stop'); inp(m.bound_db, 'm-bound');
  const del = document.createElement('button');
  del.textContent = '✕';
  del.onclick = () => { tr.remove(); drawPlot(); };
  tr.insertCell().appendChild(del);
  tr.addEventListener('change', drawPlot);
}

function readMasks() {
  return Array.from($('masks').tBodies[0].rows, (tr) => ({
    s: tr.querySelector('.m-s').value.trim(), type: tr.querySelector('.m-type').value,
    start: +tr.querySelector('.m-start').value, stop: +tr.querySelector('.m-stop').value,
    bound_db: +tr.querySelector('.m-bound').value,
  }));
}

// A first guess the user edits: the widest run of empty columns (the gap
// between launches), else the middle third of the board.
function setDefaultRegion() {
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

function regionMask() {
  const { nx, ny } = state, c0 = +$('reg-c0').value, c1 = +$('reg-c1').value, r0 = +$('reg-r0').value, r1 = +$('reg-r1').value;
  let s = '';
  for (let j = 0; j < ny; j++) for (let i = 0; i < nx; i++) s += i >= c0 && i <= c1 && j >= r0 && j <= r1 ? '1' : '0';
  return s;
}

function drawRegion() {
  const svg = $('editor');
  const old = svg.querySelector('.region');
  if (old) old.remove();
  if ($('design-tab').hidden && !state.liveOn) return;
  const c0 = +$('reg-c0').value, c1 = +$('reg-c1').value, r0 = +$('reg-r0').value, r1 = +$('reg-r1').value;
  el('rect', { x: c0, y: state.ny - 1 - r1, width: c1 - c0 + 1, height: r1 - r0 + 1, class: 'region' }, svg);
}

async function runDesign() {
  if (state.busy) return;
  clearTimeout(state.sweepTimer);
  setBusy(true);
  try { await designSteps(); } finally { setBusy(false); }
}

async function designSteps() {
  showError('');
  try { await sendProject(); } catch (e) { showError(e.message); return; }
  const spec = {
    symmetry: $('symmetry').value, unit: 'GHz', masks: readMasks(),
    constraints: { corner_contacts: 'forbid' }, start: $('design-start').value,
    frequencies: { points: Math.round(+$('dpoints').value) }, passes: Math.round(+$('passes').value),
    time_budget: +$('budget').value, seed: 1,
  };
  const r = await api('POST', '/api/design', { region: regionMask(), spec });
  if (!r.ok) { showError(r.data.error); return; }
  const end = await followJob((j) => { $('design-status').textContent = j.phase; $('progress').value = j.fraction; });
  if (end.state !== 'done') { showError(end.message || end.state); return; }
  const d = (await api('GET', '/api/design')).data;
  state.design = d;
  for (let k = 0; k < d.map.length; k++) { state.map[k] = d.map[k] === '1' ? 1 : 0; paintCell(k); }
  const rep = d.report;
  $('design-status').textContent = `cost ${rep.start_cost.toFixed(3)} → ${rep.cost.toFixed(3)} dB after ${rep.tried} trials ` +
    `(${rep.accepted} kept${rep.stopped ? ', stopped' : ''}, ${rep.seconds.toFixed(1)} s)`;
  updateDownloads();
  drawPlot();
}

// ---- start -------------------------------------------------------------------
async function main() {
  setupEditor();
  $('sweep').onclick = runSweep;
  $('sweep-stop').onclick = () => api('DELETE', '/api/job');
  $('design-run').onclick = runDesign;
  $('design-stop').onclick = () => api('DELETE', '/api/job');
  $('add-mask').onclick = () => { addMask(); drawPlot(); };
  $('save-project').onclick = saveProject;
  $('open-file').onchange = (e) => {
    const f = e.target.value;
    if (f.endsWith('.csv')) openMap(f); else if (f) openFile(f);
    e.target.value = '';
  };
  $('live').onchange = (e) => {
    if (e.target.checked) { startLive(); return; }
    clearTimeout(state.sweepTimer);
    state.liveOn = false;
    $('live-status').textContent = '';
    drawRegion();
    drawPlot();
  };
  for (const r of document.querySelectorAll('input[name=mode]')) r.onchange = drawPlot;
  for (const id of ['reg-c0', 'reg-c1', 'reg-r0', 'reg-r1']) $(id).onchange = () => { drawRegion(); if (state.liveOn) startLive(); };
  for (const b of document.querySelectorAll('nav .tab')) {
    b.onclick = () => {
      for (const o of document.querySelectorAll('nav .tab')) o.classList.toggle('active', o === b);
      for (const p of document.querySelectorAll('.tabpane')) p.hidden = p.id !== b.dataset.tab;
      drawRegion();
      drawPlot();
    };
  }
  // a closed tab stops its job at once (the server's watchdog would, later)
  window.addEventListener('pagehide', () => fetch('/api/job', { method: 'DELETE', keepalive: true, headers: { 'X-Solvent-Client': CLIENT } }));
  addMask({ s: 'S21', type: 'min', start: 0.5, stop: 2, bound_db: -1 });
  addMask({ s: 'S21', type: 'max', start: 6, stop: 9, bound_db: -15 });
  listFiles();
  const r = await api('GET', '/api/project');
  if (r.ok && r.data.project) setProject(r.data.name, r.data.project);
  else {
    $('editor').setAttribute('viewBox', '0 0 24 4');
    el('text', { x: 1, y: 2, class: 'hint' }, $('editor'), 'Open a project (top right)');
  }
  drawPlot();
  document.body.dataset.ready = '1';
}

main();
