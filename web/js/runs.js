// What the buttons run on the server: the sweep, live mode's flips, the design.

import { $, api, bytes, followJob, showError, state } from './core.js';
import { drawRegion, paintCell, regionMask } from './editor.js';
import { updateDownloads } from './files.js';
import { drawPlot, drawReport } from './plot.js';
import { band, sendProject } from './project.js';

// After an edit: live S at once, a full sweep when editing pauses.
export async function edited(cells) {
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

export async function startLive() {
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

export function setBusy(b) {
  state.busy = b;
  $('sweep').disabled = b;
  $('sweep-stop').disabled = !b;
  $('design-run').disabled = b;
  $('design-stop').disabled = !b;
}

export async function runSweep() {
  if (state.busy) return;
  clearTimeout(state.sweepTimer);
  setBusy(true);
  try { await sweepSteps(); } finally { setBusy(false); }
}

// Send the project, show the memory estimate, run, follow, fetch the result.
export async function sweepSteps() {
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

export function addMask(m) {
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

export function readMasks() {
  return Array.from($('masks').tBodies[0].rows, (tr) => ({
    s: tr.querySelector('.m-s').value.trim(), type: tr.querySelector('.m-type').value,
    start: +tr.querySelector('.m-start').value, stop: +tr.querySelector('.m-stop').value,
    bound_db: +tr.querySelector('.m-bound').value,
  }));
}

export async function runDesign() {
  if (state.busy) return;
  clearTimeout(state.sweepTimer);
  setBusy(true);
  try { await designSteps(); } finally { setBusy(false); }
}

export async function designSteps() {
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
  let shown = '';
  const end = await followJob((j) => {
    $('design-status').textContent = j.phase; $('progress').value = j.fraction;
    if (j.map && j.map !== shown) { // the search's current map, as it goes
      for (let k = 0; k < j.map.length; k++) { state.map[k] = j.map[k] === '1' ? 1 : 0; paintCell(k); }
      shown = j.map;
    }
  });
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
