// The page's shared pieces: this tab's id, its state, the server's API and the jobs it follows.

export const SVGNS = 'http://www.w3.org/2000/svg';
export const $ = (id) => document.getElementById(id);

// This tab's id: the server keeps one project and one job per tab.
export const CLIENT = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');

export const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];

export const state = {
  project: null,   // the project's JSON object
  name: '',
  nx: 0, ny: 0,
  map: null,       // Uint8Array nx*ny, cell i + nx*j, j = 0 the bottom row
  portCells: [],   // each port's cells (from the server)
  fixed: null,     // cells a port sits on: never flipped
  sweep: null,     // the last sweep's answer
  live: null,      // live mode's last S
  liveOn: false,
  design: null,
  busy: false,
  sweepTimer: null,
};

export async function api(method, path, body) {
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

export function showError(msg) {
  const e = $('error');
  e.textContent = msg || '';
  e.hidden = !msg;
}

export function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

// Follow the tab's job until it ends; onProgress sees each answer.
export async function followJob(onProgress) {
  for (;;) {
    const r = await api('GET', '/api/job');
    if (!r.ok) return { state: 'failed', message: r.data && r.data.error };
    onProgress(r.data);
    if (r.data.state !== 'running') return r.data;
    await sleep(50);
  }
}

export function bytes(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let k = 0;
  while (n >= 1024 && k < u.length - 1) { n /= 1024; k++; }
  return n.toFixed(k ? 1 : 0) + ' ' + u[k];
}

export function el(name, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
