// Retention: deletions over time by rule, what each group lost unread and
// when, the space by table, and the held area by month (servers that have
// one).
import { get, q } from './api.js';
import { stackedBars } from './chart.js';
import { bytes, h, num, section, table, time } from './ui.js';

const RANGES = { '24h': 24 * 3600e3, '7d': 7 * 24 * 3600e3, '30d': 30 * 24 * 3600e3 };
const RULES = [
  { key: 'retention', label: 'retentionSeconds', field: 'retentionMsgs' },
  { key: 'completed_retention', label: 'completedRetentionSeconds', field: 'completedRetentionMsgs' },
  { key: 'max_wait', label: 'maxWaitTimeSeconds', field: 'evictionMsgs' },
];

export async function render({ params, go }) {
  const range = RANGES[params.get('range')] ? params.get('range') : '24h';
  const queue = params.get('queue') || '';
  const st = await get('/api/v1/status');
  const to = new Date(st.time);
  const from = new Date(to.getTime() - RANGES[range]);
  const window = { from: from.toISOString(), to: to.toISOString(), queue };
  const [series, lost, pg, stats, ret, held] = await Promise.all([
    get('/api/v1/analytics/retention' + q(window)),
    get('/api/v1/retention/history' + q({ ...window, lostOnly: true, limit: 1000 })),
    get('/api/v1/analytics/postgres-stats'),
    get('/api/v1/analytics/table-stats'),
    get('/api/v1/retention/status' + q({ queue })),
    get('/api/v1/retention/tiers').catch(() => null),
  ]);
  const controls = h('div', { class: 'actions' },
    Object.keys(RANGES).map((r) => h('button', { 'data-range': r, disabled: r === range || null, onclick: () => go('retention', '', { range: r, queue }) }, 'last ' + r)),
    queue ? h('span', { class: 'muted' }, ' queue ', queue, ' ', h('a', { href: '#/retention?range=' + range }, '(all queues)')) : null);
  return h('div', null,
    h('h1', null, 'Retention'), controls,
    section('Deletions over time by rule', deletionsChart(series), totals(series)),
    section('Unread messages lost, by group', lostTable(lost.entries),
      h('p', { class: 'muted' }, 'Only retentionSeconds and maxWaitTimeSeconds delete messages a group has not read; each such deletion is audited per group.')),
    section('Space by table', spaceTable(pg, stats), logicalTable(ret)),
    held ? section('Held area by month', heldTable(held.held)) : null);
}

function deletionsChart(series) {
  const buckets = series.series.map((b) => ({
    at: new Date(b.bucket), values: Object.fromEntries(RULES.map((r) => [r.key, b[r.field]])),
  }));
  return stackedBars({
    from: new Date(series.timeRange.from), to: new Date(series.timeRange.to), bucketMs: series.bucketMinutes * 60e3,
    buckets, series: RULES, name: 'deletions',
  });
}

function totals(series) {
  const t = series.totals;
  return h('p', { 'data-totals': 'deletions' },
    h('span', { 'data-total': 'total' }, num(t.totalMsgs)), ' messages deleted in ', num(t.eventCount), ' decisions (a queue, a rule, a cycle): ',
    RULES.map((r, i) => [i ? ', ' : '', h('span', { 'data-total': r.key }, num(t[r.field])), ' by ', r.label]),
    ` (${series.bucketMinutes}-minute buckets).`);
}

function lostTable(entries) {
  const rows = entries.flatMap((e) => e.lost.map((l) => ({ e, l })));
  return table([
    { title: 'When', key: 'executedAt', cell: (r) => time(r.e.executedAt) },
    { title: 'Queue', key: 'queue', cell: (r) => h('a', { href: '#/queue/' + encodeURIComponent(r.e.queue) }, r.e.queue) },
    { title: 'Partition', key: 'partition', cell: (r) => (r.e.partitions > 1 ? `${num(r.e.partitions)} partitions` : r.e.partition) },
    { title: 'Rule', key: 'rule', cell: (r) => r.e.rule },
    { title: 'Group', key: 'group', cell: (r) => r.l.group },
    { title: 'Lost unread', key: 'messages', num: true, cell: (r) => num(r.l.messages) },
    { title: 'Offsets', key: 'offsets', cell: (r) => offsets(r.l) },
    { title: 'Of them leased', key: 'leased', num: true, cell: (r) => num(r.l.leased) },
  ], rows, { name: 'lost', empty: 'No group lost an unread message in this range.', rowAttrs: (r) => ({ 'data-group': r.l.group, 'data-queue': r.e.queue }) });
}

// offsets: a loss's range in its one partition, else its range in each
// partition the history lists (the first 16 at most).
function offsets(l) {
  if (l.fromOffset != null) return `${l.fromOffset}..${l.toOffset}`;
  const listed = (l.ranges || []).map((r) => `${r.partition} ${r.fromOffset}..${r.toOffset}`);
  const more = (l.partitions || 0) - listed.length;
  return listed.concat(more > 0 ? [`${more} more`] : []).join(', ');
}

// spaceTable: each table on disk (heap, TOAST, indexes) with its live and
// dead rows (dead: deleted, not yet reclaimed by VACUUM).
function spaceTable(pg, stats) {
  const byName = Object.fromEntries(stats.tables.map((t) => [t.table, t]));
  const st = (t) => byName[t.table] || {};
  return [
    h('p', null, `Schema ${pg.schema}: `, h('strong', null, bytes(pg.schemaBytes)), ` on disk, in database ${pg.database} of ${pg.databaseSize}.`),
    table([
      { title: 'Table', key: 'table', cell: (t) => t.table },
      { title: 'On disk', key: 'totalBytes', num: true, cell: (t) => bytes(t.totalBytes) },
      { title: 'Heap', key: 'tableBytes', num: true, cell: (t) => bytes(t.tableBytes) },
      { title: 'TOAST', key: 'toastBytes', num: true, cell: (t) => bytes(t.toastBytes) },
      { title: 'Indexes', key: 'indexBytes', num: true, cell: (t) => bytes(t.indexBytes) },
      { title: 'Live rows', key: 'liveRows', num: true, cell: (t) => num(st(t).liveRows) },
      { title: 'Dead rows', key: 'deadRows', num: true, cell: (t) => num(st(t).deadRows) },
      { title: 'Last vacuum', key: 'lastVacuum', cell: (t) => time(latest(st(t).lastVacuum, st(t).lastAutovacuum)) },
    ], pg.tables, { name: 'tables', rowAttrs: (t) => ({ 'data-table-name': t.table }) }),
  ];
}

function latest(a, b) {
  if (!a || !b) return a || b;
  return a > b ? a : b;
}

// logicalTable: each queue's data as written (frame bytes, before
// compression) against the segments it takes, and how far the footprint
// lags the rules.
function logicalTable(ret) {
  return [h('h2', null, 'Logical size by queue'), table([
    { title: 'Queue', key: 'queue', cell: (s) => s.queue },
    { title: 'Messages', key: 'messages', num: true, cell: (s) => num(s.messages) },
    { title: 'Segments', key: 'segments', num: true, cell: (s) => num(s.segments) },
    { title: 'Frame bytes (logical)', key: 'bytes', num: true, cell: (s) => bytes(s.bytes) },
    { title: 'Oldest message', key: 'oldestMessageAt', cell: (s) => time(s.oldestMessageAt) },
    { title: 'Footprint lag', key: 'windowLagSeconds', num: true, cell: (s) => (s.windowLagSeconds ? num(Math.round(s.windowLagSeconds)) + ' s' : '—') },
  ], ret.queues, { name: 'logical', empty: 'No queue yet.' })];
}

// heldTable: each queue's share of each month of the held area (GET
// /api/v1/retention/tiers): messages kept because some group had not
// consumed them when their time partition was dropped, and how many each
// group still has to read.
function heldTable(months) {
  const pending = (m) => Object.entries(m.pending || {}).map(([g, n]) => `${g}: ${num(n)}`).join(', ') || '—';
  return table([
    { title: 'Month', key: 'month', cell: (m) => m.month },
    { title: 'Queue', key: 'queue', cell: (m) => h('a', { href: '#/queue/' + encodeURIComponent(m.queue) }, m.queue) },
    { title: 'Messages', key: 'messages', num: true, cell: (m) => num(m.messages) },
    { title: 'Bytes', key: 'bytes', num: true, cell: (m) => bytes(m.bytes) },
    { title: 'Unread, by group', key: 'pending', cell: pending },
    { title: 'Quarantined', key: 'quarantined', num: true, cell: (m) => num(m.quarantined) },
  ], months, { name: 'held', empty: 'The held area is empty.', rowAttrs: (m) => ({ 'data-held': m.month + '/' + m.queue }) });
}
