// Files: downloads, and the served folder's projects and maps.

import { $, CLIENT, api, showError, state } from './core.js';
import { paintCell } from './editor.js';
import { drawPlot } from './plot.js';
import { currentProject, sendProject, setProject } from './project.js';

let blobUrls = [];

export function updateDownloads() {
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

export async function listFiles() {
  const r = await api('GET', '/api/files');
  if (!r.ok) return;
  const sel = $('open-file');
  for (const f of r.data.files.filter((n) => n.endsWith('.json') || n.endsWith('.csv'))) sel.appendChild(new Option(f, f));
}

// A CSV map (ny lines of nx 0/1, the top row first) drawn on the board.
export async function openMap(name) {
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

export async function openFile(name) {
  showError('');
  const r = await api('POST', '/api/open?name=' + encodeURIComponent(name));
  if (!r.ok) { showError(r.data.error); return; }
  state.sweep = state.live = state.design = null;
  state.liveOn = false;
  $('live').checked = false;
  setProject(name, r.data.project, r.data.port_cells);
  drawPlot();
}

export async function saveProject() {
  const name = prompt('Save as (a .json file in the served folder)', state.name || 'project.json');
  if (!name) return;
  try { await sendProject(); } catch (e) { showError(e.message); return; }
  const r = await api('PUT', '/api/file?name=' + encodeURIComponent(name), JSON.stringify(currentProject(), null, 1) + '\n');
  if (!r.ok) showError(r.data.error); else $('phase').textContent = 'saved ' + name;
}
