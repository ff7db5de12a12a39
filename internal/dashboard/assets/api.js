// The dashboard's only way to the server: lethe's HTTP API, with the
// token the user entered (kept in sessionStorage, sent as a bearer token).

const TOKEN_KEY = 'lethe.token';

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// ApiError is a refused or failed call, with what the user can do.
export class ApiError extends Error {
  constructor(status, message, path) {
    super(message);
    this.status = status;
    this.path = path;
  }
}

// advice says which token a 401 or 403 needs, in the user's terms.
function advice(status, serverMessage) {
  if (status === 401) {
    return 'This server needs a token: enter LETHE_AUTH_TOKEN (or LETHE_OPERATOR_TOKEN) in the Token field above. ' +
      `(${serverMessage})`;
  }
  if (status === 403) {
    return 'This action needs the operator token: enter LETHE_OPERATOR_TOKEN in the Token field above. ' +
      `(${serverMessage})`;
  }
  return serverMessage;
}

async function call(method, path, body) {
  const headers = {};
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (resp.status === 204) return null;
  const text = await resp.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (e) {
    data = null;
  }
  if (!resp.ok) {
    const msg = (data && data.error) || `${resp.status} ${resp.statusText}`;
    throw new ApiError(resp.status, advice(resp.status, msg), path);
  }
  if (data === null && text) throw new ApiError(resp.status, `${path} did not answer JSON`, path);
  return data;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body);
export const del = (path) => call('DELETE', path);

// q builds a query string from the set values of params.
export function q(params) {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
  }
  const out = s.toString();
  return out ? '?' + out : '';
}

export const enc = encodeURIComponent;

// counters reads this replica's Prometheus counters that the dashboard
// turns into rates: messages pushed and delivered, by queue.
export async function counters() {
  const resp = await fetch('/metrics/prometheus');
  if (!resp.ok) return null;
  const text = await resp.text();
  const out = { pushed: {}, delivered: {}, at: performance.now() };
  for (const line of text.split('\n')) {
    const m = /^lethe_messages_(pushed|delivered)_total\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const queue = /(?:^|,)queue="((?:[^"\\]|\\.)*)"/.exec(m[2]);
    if (!queue) continue;
    const name = queue[1].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    out[m[1]][name] = (out[m[1]][name] || 0) + Number(m[3]);
  }
  return out;
}
