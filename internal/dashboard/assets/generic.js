// Tables of rows whose shape the dashboard does not know in advance (the
// routes of newer servers): one column per field of the first rows.
import { h, table } from './ui.js';

function cellText(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

// rowsOf finds the list in an answer: the answer itself, or its first
// array-valued field.
export function rowsOf(answer) {
  if (Array.isArray(answer)) return answer;
  for (const v of Object.values(answer || {})) if (Array.isArray(v)) return v;
  return [];
}

export function genericTable(rows, name, empty) {
  const keys = [];
  for (const r of rows.slice(0, 20)) for (const k of Object.keys(r)) if (!keys.includes(k)) keys.push(k);
  const columns = keys.map((k) => ({ title: k, key: k, num: rows.every((r) => typeof r[k] === 'number'), cell: (r) => cellText(r[k]) }));
  return table(columns, rows, { name, empty });
}

export function section(title, ...body) {
  return h('section', null, h('h2', null, title), ...body);
}
