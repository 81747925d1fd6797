// The project the page edits: its JSON, the map of pixels, the form, and what is sent back.

import { $, api, state } from './core.js';
import { drawEditor, setDefaultRegion } from './editor.js';
import { updateDownloads } from './files.js';

// portCells: each port's cells (i + nx·j) as the server's library places them.
export function setProject(name, project, portCells) {
  state.project = project;
  state.name = name;
  state.nx = project.grid.nx;
  state.ny = project.grid.ny;
  state.map = new Uint8Array(state.nx * state.ny);
  project.pixels.forEach((row, r) => {
    const j = state.ny - 1 - r;
    for (let i = 0; i < state.nx; i++) state.map[i + state.nx * j] = row[i] === '#' ? 1 : 0;
  });
  state.portCells = portCells || [];
  state.fixed = new Uint8Array(state.nx * state.ny);
  for (const cells of state.portCells) for (const c of cells) state.fixed[c] = 1;
  $('project-name').textContent = name || project.title || '';
  fillForm();
  drawEditor();
  setDefaultRegion();
  updateDownloads();
}

export function fillForm() {
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
export function currentProject() {
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

export function pixelRows() {
  const rows = [];
  for (let j = state.ny - 1; j >= 0; j--) {
    let s = '';
    for (let i = 0; i < state.nx; i++) s += state.map[i + state.nx * j] ? '#' : '.';
    rows.push(s);
  }
  return rows;
}

export function band() {
  return { start_hz: +$('start').value * 1e9, stop_hz: +$('stop').value * 1e9, points: Math.round(+$('points').value) };
}

export async function sendProject() {
  const r = await api('PUT', '/api/project', currentProject());
  if (!r.ok) throw new Error(r.data ? r.data.error : 'the server did not answer');
  state.project = r.data.project;
}
