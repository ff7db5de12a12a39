// Dead letters: list, inspect, replay and delete (operator, confirmed).
import { del, enc, get, post, q } from './api.js';
import { actionStatus, confirmAction, h, num, pretty, table, time } from './ui.js';

const PAGE = 50;
let selectedId = null; // kept across refreshes
let lastResult = null; // what the last action did, shown after the refresh it causes

export async function render({ params, go, refresh }) {
  const filter = { queue: params.get('queue') || '', consumerGroup: params.get('group') || '' };
  const offset = Number(params.get('offset') || 0);
  const list = await get('/api/v1/dlq' + q({ ...filter, limit: PAGE, offset }));
  const status = h('div', { class: 'status', 'data-action-status': 'dlq' });
  if (lastResult) actionStatus(status, lastResult.text, lastResult.ok);
  lastResult = null; // shown once, after the refresh the action caused
  const panel = h('div', { class: 'panel', 'data-panel': 'dead-letter' }, h('p', { class: 'muted' }, 'Pick a dead letter to inspect it.'));
  const select = (d, tr) => {
    selectedId = d.id;
    for (const row of tr.parentNode.children) row.classList.remove('selected');
    tr.classList.add('selected');
    panel.replaceChildren(inspect(d, status, refresh));
  };
  const rows = table([
    { title: 'Failed', key: 'failedAt', cell: (d) => time(d.failedAt) },
    { title: 'Queue', key: 'queue', cell: (d) => d.queue },
    { title: 'Partition', key: 'partition', cell: (d) => d.partition },
    { title: 'Group', key: 'consumerGroup', cell: (d) => d.consumerGroup },
    { title: 'Transaction id', key: 'transactionId', cell: (d) => d.transactionId },
    { title: 'Retries', key: 'retryCount', num: true, cell: (d) => num(d.retryCount) },
    { title: 'Error', key: 'errorMessage', cell: (d) => d.errorMessage },
  ], list.messages, {
    name: 'dead-letters', empty: 'No dead letter.', onclick: select,
    rowAttrs: (d) => ({ 'data-id': d.id, 'data-txn': d.transactionId, class: d.id === selectedId ? 'selected' : null }),
  });
  const chosen = list.messages.find((d) => d.id === selectedId);
  if (chosen) panel.replaceChildren(inspect(chosen, status, refresh));
  const form = h('form', { class: 'filters' },
    h('label', null, 'Queue', h('input', { name: 'queue', value: filter.queue })),
    h('label', null, 'Group', h('input', { name: 'group', value: filter.consumerGroup })),
    h('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go('dlq', '', { queue: form.elements.queue.value.trim(), group: form.elements.group.value.trim() });
  });
  return h('div', null, h('h1', null, 'Dead letters ', h('span', { class: 'muted', 'data-dlq-total': list.total }, `(${num(list.total)})`)),
    form, status, h('div', { class: 'split' }, rows, panel),
    list.total > list.messages.length ? h('div', { class: 'actions' },
      h('button', { disabled: offset === 0 || null, onclick: () => go('dlq', '', { ...params0(filter), offset: Math.max(0, offset - PAGE) || '' }) }, 'Newer'),
      h('button', { disabled: offset + PAGE >= list.total || null, onclick: () => go('dlq', '', { ...params0(filter), offset: offset + PAGE }) }, 'Older')) : null);
}

function params0(f) {
  return { queue: f.queue, group: f.consumerGroup };
}

function inspect(d, status, refresh) {
  const act = async (what, question, run, done) => {
    if (!(await confirmAction(question))) return;
    try {
      const r = await run();
      lastResult = { text: done(r), ok: true };
      selectedId = null;
    } catch (e) {
      lastResult = { text: `${what} refused: ${e.message}`, ok: false };
    }
    actionStatus(status, lastResult.text, lastResult.ok);
    await refresh();
  };
  const replay = () => act('Replay', `Replay dead letter ${d.id} (${d.transactionId}) to ${d.queue}/${d.partition}? ` +
    'Its payload is pushed again under a new transaction id and the dead letter is dropped.',
  () => post(`/api/v1/dlq/${enc(d.id)}/replay`),
  (r) => `Replayed to ${r.queue}/${r.partition} as transaction ${r.transactionId} (offset ${r.offset}).`);
  const drop = () => act('Delete', `Delete dead letter ${d.id} (${d.transactionId})? Its payload is gone for good.`,
    () => del(`/api/v1/dlq/${enc(d.id)}`), () => `Dead letter ${d.id} deleted.`);
  const facts = [['Id', d.id], ['Transaction id', d.transactionId], ['Trace id', d.traceId], ['Queue', d.queue],
    ['Partition', d.partition], ['Group', d.consumerGroup], ['Offset', num(d.offset)], ['Retries', num(d.retryCount)],
    ['Created', time(d.createdAt)], ['Failed', time(d.failedAt)], ['Error', d.errorMessage]].filter(([, v]) => v);
  return h('div', { 'data-dead-letter': d.id },
    h('h2', null, 'Dead letter ', d.id),
    h('dl', null, facts.map(([k, v]) => [h('dt', null, k), h('dd', null, String(v))])),
    h('h2', null, 'Payload'), pretty(d.data),
    h('div', { class: 'actions' },
      h('button', { class: 'danger', 'data-action': 'replay', onclick: replay }, 'Replay'),
      h('button', { class: 'danger', 'data-action': 'delete', onclick: drop }, 'Delete')));
}
