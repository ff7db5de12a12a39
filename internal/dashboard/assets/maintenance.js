// Maintenance mode: push maintenance (pushes buffered durably, replayed
// when it ends) and pop maintenance (pops answer nothing). Switching needs
// the operator token and a confirmation.
import { get, post } from './api.js';
import { actionStatus, confirmAction, h, num } from './ui.js';

export async function render({ refresh }) {
  const [push, pop] = await Promise.all([get('/api/v1/system/maintenance'), get('/api/v1/system/maintenance/pop')]);
  const status = h('div', { class: 'status', 'data-action-status': 'maintenance' });
  const toggle = async (path, what, on) => {
    const verb = on ? 'Turn on' : 'Turn off';
    if (!(await confirmAction(`${verb} ${what} for every replica?`))) return;
    try {
      await post(path, { enabled: on });
      await refresh();
    } catch (e) {
      actionStatus(status, `${verb} ${what} refused: ${e.message}`, false);
    }
  };
  const row = (key, title, enabled, path, detail) => h('div', { class: 'panel switch', 'data-switch': key, 'data-enabled': String(enabled) },
    h('strong', null, title),
    h('span', { class: 'pill ' + (enabled ? 'on' : 'off') }, enabled ? 'ON' : 'off'),
    h('span', { class: 'muted' }, detail),
    h('button', { class: 'danger', 'data-action': 'toggle-' + key, onclick: () => toggle(path, title.toLowerCase(), !enabled) },
      enabled ? 'Turn off' : 'Turn on'));
  return h('div', null,
    h('h1', null, 'Maintenance'),
    row('push', 'Push maintenance', push.enabled, '/api/v1/system/maintenance',
      `pushes go to a durable local buffer and are replayed exactly once when it is turned off; ${num(push.bufferedMessages)} buffered` +
      (push.bufferHealthy ? '' : ' (the buffer reported a failure: see the server log)')),
    row('pop', 'Pop maintenance', pop.enabled, '/api/v1/system/maintenance/pop', 'pops answer 204 (nothing) while it is on'),
    status);
}
