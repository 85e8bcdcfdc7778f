// Helpers for the admin listener tests: a cluster whose gateway has an
// admin listener on a free port, and a small HTTP client that keeps the
// raw response (status, headers, body) for exact assertions.
import http from 'node:http';
import { Cluster } from '../cluster/cluster.mjs';

export const token = 'secret';

// Starts the cluster with `--admin 127.0.0.1:0` (plus `--api-token secret`
// unless withToken is false) and reads the admin port from the gateway's
// "admin listening on HOST:PORT" line.
export async function startWithAdmin({ withToken = true, gatewayArgs = [], ...rest } = {}) {
  const args = ['--admin', '127.0.0.1:0', ...(withToken ? ['--api-token', token] : []), ...gatewayArgs];
  const c = await Cluster.start({ ...rest, gatewayArgs: args });
  const m = await c.gateway.waitFor(/admin listening on [^ ]+:(\d+)/);
  c.adminPort = Number(m[1]);
  return c;
}

// One request on a fresh connection; resolves { status, headers, body }.
// `body` is sent as is (a string or Buffer); headers as given.
export function request(c, { method = 'GET', path = '/', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: c.adminPort, method, path, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body); else req.end();
  });
}

// POST /api/publish with the right token unless `auth` says otherwise.
export function publish(c, body, { auth = `Bearer ${token}`, headers = {} } = {}) {
  const h = { 'content-type': 'application/json', ...headers };
  if (auth !== null) h.authorization = auth;
  return request(c, { method: 'POST', path: '/api/publish', headers: h, body });
}
