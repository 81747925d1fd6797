// The plot: |S| in dB or phase against frequency with the exactly solved frequencies marked, a Smith chart, the report.

import { $, COLORS, bytes, el, state } from './core.js';
import { readMasks } from './runs.js';

export function drawReport() {
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

export const PLOT = { x0: 60, x1: 620, y0: 20, y1: 360 };

// The entries plotted: S_ij with i >= j (the networks are reciprocal).
export function entries(data) {
  const n = data.ports.length, out = [];
  for (let j = 1; j <= n; j++) for (let i = j; i <= n; i++) out.push(n < 10 ? `S${i}${j}` : `S${i},${j}`);
  return out;
}

export function drawPlot() {
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

export function niceStep(x) {
  if (!(x > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(x))), m = x / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

export function drawMasks(svg, X, Y, ymin, ymax) {
  for (const m of readMasks()) {
    const x0 = X(m.start * 1e9), x1 = X(m.stop * 1e9);
    const b = Math.min(Math.max(m.bound_db, ymin), ymax);
    const y0 = m.type === 'max' ? Y(ymax) : Y(b), y1 = m.type === 'max' ? Y(b) : Y(ymin);
    el('rect', { x: Math.min(x0, x1), y: y0, width: Math.abs(x1 - x0), height: Math.max(0, y1 - y0), class: 'mask' }, svg)
      .setAttribute('data-mask', m.s);
  }
}

export function drawSmith(svg) {
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
