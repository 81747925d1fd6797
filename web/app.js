// Solvent's browser app: the page edits a project (its JSON, with the metal
// as pixel strings) and asks the server (`solvent serve`) to sweep it, follow
// edits live and design it. All numbers come from the server; the page only
// draws them. Plain JavaScript and SVG, no libraries.

import { $, CLIENT, api, el, state } from './js/core.js';
import { drawRegion, setupEditor } from './js/editor.js';
import { listFiles, openFile, openMap, saveProject } from './js/files.js';
import { drawPlot } from './js/plot.js';
import { setProject } from './js/project.js';
import { addMask, runDesign, runSweep, startLive } from './js/runs.js';

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
  if (r.ok && r.data.project) setProject(r.data.name, r.data.project, r.data.port_cells);
  else {
    $('editor').setAttribute('viewBox', '0 0 24 4');
    el('text', { x: 1, y: 2, class: 'hint' }, $('editor'), 'Open a project (top right)');
  }
  drawPlot();
  document.body.dataset.client = CLIENT;
  document.body.dataset.ready = '1';
}

main();
