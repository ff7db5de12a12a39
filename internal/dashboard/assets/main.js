// The dashboard's shell: routing (#/page/arg?query), the token form, the
// refresh loop, and the page state tests and people can read
// (main[data-page][data-state][data-render]).
import { ApiError, get, setToken, token } from './api.js';
import { banner, h } from './ui.js';
import * as overview from './overview.js';
import * as queue from './queue.js';
import * as messages from './messages.js';
import * as dlq from './dlq.js';
import * as retention from './retention.js';
import * as maintenance from './maintenance.js';

const pages = { overview, queue, messages, dlq, retention, maintenance };
const REFRESH_MS = 5000;
// A page that took long to load is refreshed less often: its next
// automatic refresh waits ten times as long as it took (at least
// REFRESH_MS), so an open tab never keeps the server busy more than a
// tenth of the time. Status pages read every partition's lag, seconds of
// PostgreSQL at 10,000 lagging partitions.
const REFRESH_FACTOR = 10;
const AUTO_KEY = 'lethe.autoRefresh';
let refreshMs = REFRESH_MS;
let renderedAt = Date.now();
const main = document.getElementById('main');
let generation = 0;
let renders = 0;

// route reads the hash: #/queue/orders?x=1 → {page: 'queue', arg: 'orders', params}.
function route() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query] = raw.split('?');
  const [page, ...rest] = path.split('/');
  const name = page || 'overview';
  return {
    page: pages[name] ? name : 'overview',
    arg: rest.length ? decodeURIComponent(rest.join('/')) : '',
    params: new URLSearchParams(query || ''),
  };
}

// go changes the hash (and so the page) to page with params.
export function go(page, arg, params) {
  const qs = params ? new URLSearchParams(Object.entries(params).filter(([, v]) => v)).toString() : '';
  location.hash = '#/' + page + (arg ? '/' + encodeURIComponent(arg) : '') + (qs ? '?' + qs : '');
}

async function render() {
  const my = ++generation;
  const r = route();
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('active', a.dataset.page === r.page || (r.page === 'queue' && a.dataset.page === 'overview'));
  }
  main.dataset.page = r.page;
  main.dataset.state = 'loading';
  const started = performance.now();
  let content;
  let state = 'ready';
  try {
    content = await pages[r.page].render({ arg: r.arg, params: r.params, refresh: render, go });
    if (document.getElementById('banner').dataset.kind !== 'info') banner('');
  } catch (err) {
    state = 'error';
    content = failure(err);
  }
  if (my !== generation) return; // a newer render started meanwhile
  paceRefresh(performance.now() - started);
  main.replaceChildren(content);
  main.dataset.state = state;
  main.dataset.render = String(++renders);
  if (state === 'ready' && !document.getElementById('footer').textContent) footer();
}

// paceRefresh sets the wait before the next automatic refresh from how
// long this render took, in whole seconds, and shows it by the checkbox.
function paceRefresh(tookMs) {
  renderedAt = Date.now();
  refreshMs = Math.max(REFRESH_MS, Math.ceil((REFRESH_FACTOR * tookMs) / 1000) * 1000);
  main.dataset.refreshMs = String(refreshMs);
  document.getElementById('refresh-every').textContent = `every ${refreshMs / 1000} s`;
}

function failure(err) {
  if (!(err instanceof ApiError)) console.error(err); // a bug of the dashboard: tests fail on it
  const msg = err instanceof ApiError ? err.message : 'The page failed: ' + err;
  banner(msg);
  return h('div', { class: 'empty', 'data-error': err.status || 'script' }, msg);
}

function setupToken() {
  const input = document.getElementById('token-input');
  const state = document.getElementById('token-state');
  const show = () => {
    state.textContent = token() ? 'token set for this browser tab' : 'no token';
  };
  document.getElementById('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    input.value = '';
    show();
    render();
  });
  document.getElementById('token-clear').addEventListener('click', () => {
    setToken('');
    show();
    render();
  });
  show();
}

function setupRefresh() {
  const box = document.getElementById('auto-refresh');
  box.checked = sessionStorage.getItem(AUTO_KEY) !== 'off';
  box.addEventListener('change', () => sessionStorage.setItem(AUTO_KEY, box.checked ? 'on' : 'off'));
  document.getElementById('refresh').addEventListener('click', () => render());
  setInterval(() => {
    const busy = document.getElementById('confirm').open || main.contains(document.activeElement) &&
      ['INPUT', 'SELECT', 'TEXTAREA'].includes(document.activeElement.tagName);
    const due = Date.now() - renderedAt >= refreshMs;
    if (box.checked && due && !busy && main.dataset.state !== 'loading') render();
  }, 1000);
}

async function footer() {
  try {
    const st = await get('/api/v1/status');
    document.getElementById('footer').textContent = `${st.version} · up since ${st.startedAt}`;
  } catch (e) {
    document.getElementById('footer').textContent = '';
  }
}

setupToken();
setupRefresh();
window.addEventListener('hashchange', () => render());
render();
