// Message browser: filter by queue, partition, status, time and
// transaction id; a message's payload, headers and state per group.
import { ApiError, enc, get, q } from './api.js';
import { bytes, h, num, pretty, table, time } from './ui.js';

const PAGE = 50;
const FILTERS = ['queue', 'partition', 'status', 'from', 'to', 'txn'];

export async function render({ params, go }) {
  const f = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) || '']));
  const offset = Number(params.get('offset') || 0);
  const queues = (await get('/api/v1/resources/queues')).queues.map((x) => x.name);
  const form = filterForm(f, queues, (next) => go('messages', '', next));
  let list;
  let selected = null;
  if (f.txn) {
    if (!f.queue) return page(form, h('div', { class: 'empty' }, 'Choose the queue to look up a transaction id in.'), null);
    selected = await findByTransaction(f.queue, f.partition, f.txn);
    list = selected ? [selected] : [];
  } else {
    const p = await get('/api/v1/messages' + q({ queue: f.queue, partition: f.partition, status: f.status, from: f.from, to: f.to, limit: PAGE, offset }));
    list = p.messages;
    if (p.truncated) form.append(h('p', { class: 'warn' }, 'The scan stopped at its budget: narrow the filters (queue, partition, from, to).'));
  }
  const detail = h('div', { class: 'panel', 'data-panel': 'message' }, h('p', { class: 'muted' }, 'Pick a message to see its payload.'));
  const show = async (m, tr) => {
    for (const row of tr.parentNode.children) row.classList.remove('selected');
    tr.classList.add('selected');
    detail.replaceChildren(await messageDetail(m));
  };
  const rows = table([
    { title: 'Offset', key: 'offset', num: true, cell: (m) => num(m.offset) },
    { title: 'Queue', key: 'queue', cell: (m) => m.queue },
    { title: 'Partition', key: 'partition', cell: (m) => m.partition },
    { title: 'Transaction id', key: 'transactionId', cell: (m) => m.transactionId },
    { title: 'Status', key: 'status', cell: (m) => m.status },
    { title: 'Created', key: 'createdAt', cell: (m) => time(m.createdAt) },
    { title: 'Size', key: 'payloadBytes', num: true, cell: (m) => bytes(m.payloadBytes) },
  ], list, { name: 'messages', empty: 'No message matches.', onclick: show, rowAttrs: (m) => ({ 'data-txn': m.transactionId }) });
  const pager = f.txn ? null : h('div', { class: 'actions' },
    h('button', { disabled: offset === 0 || null, onclick: () => go('messages', '', { ...f, offset: Math.max(0, offset - PAGE) || '' }) }, 'Newer'),
    h('button', { disabled: list.length < PAGE || null, onclick: () => go('messages', '', { ...f, offset: offset + PAGE }) }, 'Older'));
  if (selected) detail.replaceChildren(await messageDetail(selected));
  return page(form, h('div', null, rows, pager), detail);
}

function page(form, list, detail) {
  return h('div', null, h('h1', null, 'Messages'), form, detail ? h('div', { class: 'split' }, list, detail) : list);
}

function filterForm(f, queues, apply) {
  const field = (label, el) => h('label', null, label, el);
  const queue = h('select', { name: 'queue' }, h('option', { value: '' }, 'every queue'),
    queues.map((n) => h('option', { value: n, selected: n === f.queue || null }, n)));
  const text = (name, ph) => h('input', { name, value: f[name], placeholder: ph, size: name === 'txn' ? 24 : 14 });
  const status = h('select', { name: 'status' }, ['', 'pending', 'processing', 'completed', 'dead'].map((s) =>
    h('option', { value: s, selected: s === f.status || null }, s || 'any status')));
  const form = h('form', { class: 'filters', 'data-form': 'messages' },
    field('Queue', queue), field('Partition', text('partition', 'any')), field('Status', status),
    field('From', text('from', '2030-01-31 or RFC 3339')), field('To', text('to', '2030-01-31 or RFC 3339')),
    field('Transaction id', text('txn', 'needs the queue')),
    h('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    apply(Object.fromEntries(FILTERS.map((k) => [k, form.elements[k].value.trim()])));
  });
  return form;
}

// findByTransaction looks the id up in the queue's partitions (the named
// one, or each in turn).
async function findByTransaction(queue, partition, txn) {
  const st = await get(`/api/v1/status/queues/${enc(queue)}${q({ includePartitions: true, limit: 1000 })}`);
  for (const p of st.partitions || []) {
    if (partition && p.name !== partition) continue;
    try {
      return await get(`/api/v1/messages/${enc(p.id)}/${enc(txn)}`);
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 404) throw e;
    }
  }
  return null;
}

async function messageDetail(m) {
  const full = m.payload !== undefined ? m : await get(`/api/v1/messages/${enc(m.partitionId)}/${enc(m.transactionId)}`);
  const headers = [
    ['Transaction id', full.transactionId], ['Trace id', full.traceId], ['Message id', full.id], ['Queue', full.queue],
    ['Partition', `${full.partition} (${full.partitionId})`], ['Offset', num(full.offset)], ['Created', time(full.createdAt)],
    ['Producer', full.producerSub], ['Size', bytes(full.payloadBytes)], ['Status', full.status],
    ['Retries', full.retryCount], ['Error', full.errorMessage],
  ].filter(([, v]) => v !== undefined && v !== '');
  const groups = Object.entries(full.consumerGroups || {});
  return h('div', { 'data-message': full.transactionId },
    h('h2', null, 'Message ', full.transactionId),
    h('dl', null, headers.map(([k, v]) => [h('dt', null, k), h('dd', { 'data-header': k }, String(v))])),
    h('h2', null, 'Delivery state per group'),
    groups.length ? table([{ title: 'Group', key: 'group', cell: (g) => g[0] }, { title: 'State', key: 'state', cell: (g) => g[1] }],
      groups, { name: 'message-groups' }) : h('p', { class: 'muted' }, 'No consumer group has this queue yet.'),
    h('h2', null, 'Payload'),
    pretty(full.payload));
}
