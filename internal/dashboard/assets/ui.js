// DOM building and formatting. Text from the server is always set as text
// (never parsed as HTML): payloads, names and errors are untrusted.

// h builds an element: attrs are attributes (data-*, class, ...) except
// "on*" functions, which become listeners; children are nodes or text.
export function h(tag, attrs, ...children) {
  const svg = ['svg', 'rect', 'line', 'text', 'g', 'title', 'path'].includes(tag);
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function num(n) {
  if (n === undefined || n === null) return '—';
  return Number(n).toLocaleString('en-US');
}

export function bytes(n) {
  if (n === undefined || n === null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n);
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return (i === 0 ? String(v) : v.toFixed(1)) + ' ' + units[i];
}

// duration formats seconds as its two largest units: "3d 4h", "5m 2s".
export function duration(seconds) {
  if (seconds === undefined || seconds === null || Number.isNaN(seconds)) return '—';
  let s = Math.max(0, Math.round(seconds));
  const parts = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]]) {
    if (s >= size || (unit === 's' && parts.length === 0)) {
      parts.push(Math.floor(s / size) + unit);
      s %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

// time shows an instant in UTC, to the second.
export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// table builds a table of rows; columns are {title, cell(row), num, key}.
// key names the cell (data-field) so tests and people can find a figure.
export function table(columns, rows, opts = {}) {
  if (!rows.length) return h('div', { class: 'empty', 'data-empty': opts.name || '' }, opts.empty || 'Nothing here yet.');
  const head = h('tr', null, columns.map((c) => h('th', { class: c.num ? 'num' : null }, c.title)));
  const body = rows.map((r) => {
    const tr = h('tr', Object.assign({ 'data-row': opts.name || '' }, opts.rowAttrs ? opts.rowAttrs(r) : {}),
      columns.map((c) => h('td', { class: c.num ? 'num' : null, 'data-field': c.key || null }, c.cell(r))));
    if (opts.onclick) {
      tr.classList.add('clickable');
      tr.addEventListener('click', () => opts.onclick(r, tr));
    }
    return tr;
  });
  return h('table', { 'data-table': opts.name || '' }, h('thead', null, head), h('tbody', null, body));
}

export function tile(label, value, key) {
  return h('div', { class: 'tile', 'data-tile': key }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));
}

export function pretty(value) {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}

// confirmAction asks before a destructive action; resolves true on Confirm.
export function confirmAction(text) {
  const dlg = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-role').textContent = 'This needs the operator token (LETHE_OPERATOR_TOKEN) when auth is on.';
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), { once: true });
    dlg.returnValue = 'cancel';
    dlg.showModal();
  });
}

// banner shows a message under the header until the next page load.
export function banner(text, kind) {
  const el = document.getElementById('banner');
  el.hidden = !text;
  el.textContent = text || '';
  el.className = 'banner' + (kind ? ' ' + kind : '');
  el.dataset.kind = kind || 'error';
}

// actionStatus is a line under a button row saying what an action did.
export function actionStatus(el, text, ok) {
  el.textContent = text;
  el.className = 'status ' + (ok ? 'good' : 'bad');
  el.dataset.result = ok ? 'ok' : 'error';
}

// section is a titled part of a page.
export function section(title, ...body) {
  return h('section', null, h('h2', null, title), ...body);
}
