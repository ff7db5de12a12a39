// One queue: partitions, consumer groups with lag and the time left before
// unread data would be deleted, options and retention rules, pending
// retention change with its progress (confirmed here by the operator).
import { enc, get, post, q } from './api.js';
import { timeLeft } from './timeleft.js';
import { actionStatus, bytes, confirmAction, duration, h, num, section, table, time } from './ui.js';

export async function render({ arg, refresh }) {
  if (!arg) return h('div', { class: 'empty' }, 'No queue named: pick one on the overview.');
  const [detail, ret, explain] = await Promise.all([
    get(`/api/v1/status/queues/${enc(arg)}${q({ includePartitions: true, limit: 1000 })}`),
    get(`/api/v1/retention/status${q({ queue: arg })}`).catch(() => null),
    get(`/api/v1/retention/explain/${enc(arg)}`).catch(() => null),
  ]);
  const opts = detail.queue.config;
  const left = timeLeft(detail.consumerGroups, detail.partitions || []);
  const status = h('div', { class: 'status', 'data-action-status': 'queue' });
  return h('div', null,
    h('h1', null, 'Queue ', h('span', { 'data-queue-name': arg }, arg)),
    h('div', { class: 'tiles' },
      tileOf('Messages stored', num(detail.totals.total), 'total'),
      tileOf('Dead letters', num(detail.totals.deadLetter), 'deadLetter'),
      tileOf('Partitions', num(detail.totals.partitions), 'partitions'),
      tileOf('Frame bytes', bytes(detail.totals.bytes), 'bytes')),
    section('Consumer groups', groupsTable(arg, detail.consumerGroups, left, status, refresh), status,
      h('p', { class: 'muted' }, 'Time left: when the retention loop deletes the oldest message the group has not read, under the current rules ' +
        '(only retentionSeconds and maxWaitTimeSeconds delete unread data); see docs/dashboard.md.')),
    section('Partitions', partitionsTable(detail.partitions || [], detail.totals.partitions)),
    section('Retention', retentionPanel(opts, ret)),
    explain ? changeSection(arg, explain.change, refresh) : null,
    section('Options', optionsTable(opts)),
    h('p', null, h('a', { href: '#/messages?queue=' + enc(arg) }, 'Browse its messages'), ' · ',
      h('a', { href: '#/dlq?queue=' + enc(arg) }, 'Its dead letters')));
}

function tileOf(label, value, key) {
  return h('div', { class: 'tile', 'data-tile': key }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));
}

function leftCell(l) {
  if (!l) return '—';
  if (l.none) return h('span', { class: 'muted', 'data-left': 'none' }, l.none);
  const where = l.partition ? ` (${l.rule}, partition ${l.partition})` : ` (${l.rule})`;
  if (l.seconds <= 0) return h('span', { class: 'bad', 'data-left': '0' }, 'due at the next cycle' + where);
  return h('span', { class: l.seconds < 3600 ? 'bad' : 'warn', 'data-left': Math.round(l.seconds) }, 'in ' + duration(l.seconds) + where);
}

function groupsTable(queue, groups, left, status, refresh) {
  const seek = async (g) => {
    if (!(await confirmAction(`Move group ${g.name} to the end of ${queue}? It skips ${num(g.totalLag)} unread messages.`))) return;
    try {
      const r = await post(`/api/v1/consumer-groups/${enc(g.name)}/queues/${enc(queue)}/seek`, { toEnd: true });
      actionStatus(status, `Group ${g.name} moved to the end of ${r.partitionsUpdated} partitions.`, true);
      await refresh();
    } catch (e) {
      actionStatus(status, e.message, false);
    }
  };
  return table([
    { title: 'Group', key: 'group', cell: (g) => g.name },
    { title: 'Lag (messages)', key: 'totalLag', num: true, cell: (g) => num(g.totalLag) },
    { title: 'Lag (time)', key: 'maxTimeLag', num: true, cell: (g) => (g.totalLag > 0 ? duration(g.maxTimeLag) : '—') },
    { title: 'State', key: 'state', cell: (g) => h('span', { class: 'state-' + g.state }, g.state) },
    { title: 'Leases', key: 'leasesHeld', num: true, cell: (g) => num(g.leasesHeld) },
    { title: 'Time left before unread data would be deleted', key: 'timeLeft', cell: (g) => leftCell(left.get(g.name)) },
    { title: '', cell: (g) => h('button', { class: 'danger', 'data-action': 'seek-end', disabled: g.totalLag === 0 || null, onclick: () => seek(g) }, 'Skip to end') },
  ], groups, { name: 'groups', empty: 'No consumer group has popped from this queue yet.', rowAttrs: (g) => ({ 'data-group': g.name }) });
}

function partitionsTable(parts, total) {
  const t = table([
    { title: 'Partition', key: 'name', cell: (p) => p.name },
    { title: 'Messages', key: 'messages', num: true, cell: (p) => num(p.messages.total) },
    { title: 'Dead letters', key: 'deadLetter', num: true, cell: (p) => num(p.messages.deadLetter) },
    { title: 'Next offset', key: 'nextOffset', num: true, cell: (p) => num(p.nextOffset) },
    { title: 'Low watermark', key: 'lowWatermark', num: true, cell: (p) => num(p.lowWatermark) },
    { title: 'Segments', key: 'segments', num: true, cell: (p) => num(p.segments) },
    { title: 'Bytes', key: 'bytes', num: true, cell: (p) => bytes(p.bytes) },
    { title: 'Last push', key: 'lastPushAt', cell: (p) => time(p.lastPushAt) },
  ], parts, { name: 'partitions', empty: 'No partition yet.', rowAttrs: (p) => ({ 'data-partition': p.name }) });
  return total > parts.length ? [t, h('p', { class: 'muted' }, `First ${parts.length} of ${total} partitions.`)] : t;
}

function retentionPanel(opts, ret) {
  const rules = [
    ['retentionEnabled', String(opts.retentionEnabled)],
    ['retentionSeconds', opts.retentionSeconds ? duration(opts.retentionSeconds) + ' (deletes unread data)' : 'off'],
    ['completedRetentionSeconds', opts.completedRetentionSeconds ? duration(opts.completedRetentionSeconds) : 'off'],
    ['maxWaitTimeSeconds', opts.maxWaitTimeSeconds ? duration(opts.maxWaitTimeSeconds) + ' (deletes unread data)' : 'off'],
    ['dedupWindowSeconds', opts.dedupWindowSeconds ? duration(opts.dedupWindowSeconds) : 'default'],
  ];
  const dl = h('dl', null, rules.map(([k, v]) => [h('dt', null, k), h('dd', { 'data-rule': k }, v)]));
  if (!ret || !ret.queues.length) return h('div', { class: 'panel' }, dl);
  const s = ret.queues[0];
  const plan = s.nextCycle;
  const next = [
    ['cutoff: retention', time(s.cutoffs.retention)], ['cutoff: completed retention', time(s.cutoffs.completedRetention)],
    ['cutoff: max wait', time(s.cutoffs.maxWait)], ['oldest message', time(s.oldestMessageAt)],
    ['next cycle would delete', `${num(plan.retention.frames + plan.completedRetention.frames + plan.maxWait.frames)} messages ` +
      `(retention ${num(plan.retention.frames)}, completed ${num(plan.completedRetention.frames)}, max wait ${num(plan.maxWait.frames)})` +
      (plan.truncated ? ' at least' : '')],
  ];
  const held = (s.holds || []).length
    ? h('dl', null, h('dt', null, 'held'), h('dd', { class: 'bad', 'data-held': s.holds.join(',') },
      `by hold ${s.holds.join(', ')}: nothing of this queue is deleted until released (lethe retention holds)`))
    : null;
  return h('div', { class: 'panel' }, dl, held,
    h('dl', null, next.map(([k, v]) => [h('dt', null, k), h('dd', null, v)])));
}

function optionsTable(opts) {
  return table([{ title: 'Option', key: 'option', cell: (r) => r[0] }, { title: 'Value', key: 'value', cell: (r) => String(r[1]) }],
    Object.entries(opts), { name: 'options' });
}

// changeSection shows the queue's retention tier change awaiting
// confirmation or running (GET /api/v1/retention/explain/{queue}): what it
// announced, what it has done so far and what is left, and for a change
// awaiting confirmation a button that confirms it (operator).
function changeSection(queue, change, refresh) {
  const title = 'Pending retention change';
  if (!change) return section(title, h('div', { class: 'empty', 'data-empty': 'change' }, 'No retention change is pending.'));
  const status = h('div', { class: 'status', 'data-action-status': 'change' });
  const confirm = async () => {
    const c = change;
    if (!(await confirmAction(`Shorten ${queue} from tier ${c.from} to ${c.to}? It deletes ${num(c.delete.messages)} finished ` +
      `messages (${bytes(c.delete.bytes)}), moves ${num(c.move.messages)} and holds ${num(c.hold.messages)} pending ones.`))) return;
    try {
      await post(`/api/v1/retention/changes/${enc(queue)}/confirm`);
      actionStatus(status, `The change of ${queue} to ${c.to} is confirmed; the retention loop runs it.`, true);
      await refresh();
    } catch (e) {
      actionStatus(status, e.message, false);
    }
  };
  const announced = change.delete.messages + change.move.messages + change.hold.messages;
  const done = change.deleted + change.moved + change.held;
  const t = table([
    { title: 'From', key: 'from', cell: (c) => c.from },
    { title: 'To', key: 'to', cell: (c) => c.to },
    { title: 'State', key: 'state', cell: (c) => c.state },
    { title: 'Deletes', key: 'delete', num: true, cell: (c) => num(c.delete.messages) },
    { title: 'Moves', key: 'move', num: true, cell: (c) => num(c.move.messages) },
    { title: 'Holds', key: 'hold', num: true, cell: (c) => num(c.hold.messages) },
    { title: 'Done', key: 'done', num: true, cell: () => num(done) },
    { title: 'Left', key: 'left', num: true, cell: (c) => num(c.left) },
    { title: 'Progress', key: 'progress', cell: () => h('progress', { max: Math.max(announced, 1), value: Math.min(done, announced) }) },
    { title: 'Requested', key: 'requestedAt', cell: (c) => time(c.requestedAt) },
    { title: '', cell: (c) => (c.state === 'awaiting_confirm'
      ? h('button', { class: 'danger', 'data-action': 'confirm-change', onclick: confirm }, 'Confirm') : null) },
  ], [change], { name: 'retention-change', rowAttrs: () => ({ 'data-queue': queue }) });
  return section(title, t, status, h('p', { class: 'muted' },
    'A shorter tier waits for an operator to confirm it; see docs/retention.md, "Changing a tier".'));
}
