// Overview: server totals, and each queue with its depth, push and pop
// rates, the age of its oldest unconsumed message, and its groups behind.
import { counters, get } from './api.js';
import { bytes, duration, h, num, table, tile } from './ui.js';

let previous = null; // the last counters read, to turn counts into rates

// rates compares two reads of the counters: messages per second by queue.
function rates(now) {
  if (!now) return null;
  const before = previous;
  previous = now;
  if (!before) return null;
  const secs = (now.at - before.at) / 1000;
  if (secs <= 0) return null;
  const per = (kind, q) => Math.max(0, ((now[kind][q] || 0) - (before[kind][q] || 0)) / secs);
  return { push: (q) => per('pushed', q), pop: (q) => per('delivered', q) };
}

function rate(r, kind, q) {
  if (!r) return '…';
  const v = r[kind](q);
  return v === 0 ? '0/s' : v < 10 ? v.toFixed(1) + '/s' : Math.round(v) + '/s';
}

export async function render({ go }) {
  const [st, list, c] = await Promise.all([
    get('/api/v1/status'),
    get('/api/v1/status/queues?limit=1000'),
    counters().catch(() => null),
  ]);
  const r = rates(c);
  const tiles = h('div', { class: 'tiles' },
    tile('Queues', num(st.queues), 'queues'),
    tile('Partitions', num(st.partitions), 'partitions'),
    tile('Messages stored', num(st.messages.total), 'messages'),
    tile('Dead letters', num(st.deadLetters), 'deadLetters'),
    tile('Consumer groups', num(st.consumerGroups), 'consumerGroups'),
    tile('Active leases', num(st.activeLeases), 'activeLeases'),
    tile('On disk (segments)', bytes(st.bytes), 'bytes'));
  const columns = [
    { title: 'Queue', key: 'name', cell: (q) => h('a', { href: '#/queue/' + encodeURIComponent(q.name) }, q.name) },
    { title: 'Depth', key: 'depth', num: true, cell: (q) => num(q.messages.total) },
    { title: 'Dead letters', key: 'deadLetters', num: true, cell: (q) => num(q.messages.deadLetter) },
    { title: 'Partitions', key: 'partitions', num: true, cell: (q) => num(q.partitions) },
    { title: 'Push rate', key: 'pushRate', num: true, cell: (q) => rate(r, 'push', q.name) },
    { title: 'Pop rate', key: 'popRate', num: true, cell: (q) => rate(r, 'pop', q.name) },
    { title: 'Oldest unconsumed', key: 'oldestUnconsumed', num: true, cell: oldest },
    { title: 'Groups behind', key: 'groupsBehind', num: true, cell: behind },
  ];
  return h('div', null,
    h('h1', null, 'Overview'),
    tiles,
    h('h2', null, 'Queues'),
    table(columns, list.queues, {
      name: 'queues', empty: 'No queue yet: push a message (lethe push QUEUE --data \'{}\') and it appears here.',
      rowAttrs: (q) => ({ 'data-queue': q.name }), onclick: (q) => go('queue', q.name),
    }),
    h('p', { class: 'muted' }, `Rates are this replica's, over the last refresh. ${list.total > list.queues.length ? `First ${list.queues.length} of ${list.total} queues.` : ''}`));
}

// oldest is the age of the oldest message some group has not consumed.
function oldest(q) {
  const lag = Math.max(0, ...q.consumerGroups.filter((g) => g.totalLag > 0).map((g) => g.maxTimeLag));
  return q.consumerGroups.some((g) => g.totalLag > 0) ? duration(lag) : '—';
}

function behind(q) {
  const n = q.consumerGroups.filter((g) => g.totalLag > 0).length;
  return n ? h('span', { class: 'warn', title: q.consumerGroups.filter((g) => g.totalLag > 0).map((g) => g.name).join(', ') },
    `${n} of ${q.consumerGroups.length}`) : `0 of ${q.consumerGroups.length}`;
}
