// The gateway's --static-dir (the demo's web server) over real sockets, and
// `framegate up` serving the bundled demo by default. No browser needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { connect as tcpConnect } from 'node:net';
import { readFileSync, realpathSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster, connect, nextMessage, gatewayBin } from '../cluster/cluster.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..');
const demoDir = process.env.FRAMEGATE_DEMO_DIR ?? join(repo, 'deploy', 'demo');
const supervisorBin = process.env.FRAMEGATE_BIN ?? join(repo, 'build', 'bin', 'framegate');

// One raw HTTP/1.1 exchange (fetch would normalize `..` away): resolves with
// { status, headers, body } once the server closes the connection.
function rawRequest(port, request, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, '127.0.0.1');
    const chunks = [];
    const timer = setTimeout(() => { socket.destroy(); reject(new Error('no complete response in time')); }, timeoutMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (e) => { clearTimeout(timer); reject(e); });
    socket.on('end', () => {
      clearTimeout(timer);
      socket.end();
      const raw = Buffer.concat(chunks).toString('latin1');
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = raw.slice(0, split).split('\r\n');
      const headers = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(split + 4) });
    });
    socket.write(request);
  });
}

const get = (port, target, method = 'GET', extra = '') =>
  rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}\r\n`);

test('with --static-dir the gateway serves files, refuses escapes, and still upgrades WebSockets', async () => {
  const c = await Cluster.start({ workers: 1, gatewayArgs: ['--static-dir', demoDir, '--admin', 'off'] });
  try {
    const index = readFileSync(join(demoDir, 'index.html'), 'latin1');
    const root = await get(c.port, '/');
    assert.equal(root.status, 200);
    assert.equal(root.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(root.headers['connection'], 'close');
    assert.equal(Number(root.headers['content-length']), Buffer.byteLength(index, 'latin1'));
    assert.equal(root.body, index);

    const js = await get(c.port, '/app.js?v=1');
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal((await get(c.port, '/style.css')).headers['content-type'], 'text/css; charset=utf-8');

    const head = await get(c.port, '/', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], root.headers['content-length']);
    assert.equal(head.body, '');

    for (const target of ['/missing.html', '/../../CMakeLists.txt', '/%2e%2e/%2e%2e/CMakeLists.txt', '/..%2f..%2fREADME.md',
      '/%00index.html', '//etc/passwd', '/.hidden']) {
      const r = await get(c.port, target);
      assert.equal(r.status, 404, target);
      assert.equal(r.body, 'no such file\n', target);
    }

    const post = await get(c.port, '/', 'POST');
    assert.equal(post.status, 405);
    assert.equal(post.headers['allow'], 'GET, HEAD');
    const withBody = await rawRequest(c.port, `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`);
    assert.equal(withBody.status, 405);

    // An upgrade is a WebSocket handshake whatever the path, as before.
    const ws = await connect(c.url('/echo'));
    ws.send('still a websocket');
    assert.equal((await nextMessage(ws)).data, 'still a websocket');
    ws.close();
    const badUpgrade = await get(c.port, '/', 'GET', 'Upgrade: websocket\r\nConnection: Upgrade\r\n');
    assert.equal(badUpgrade.status, 426, 'a broken upgrade is refused, not served a file');
  } finally {
    await c.stop();
  }
});

test('without --static-dir a plain GET still gets 426', async () => {
  const c = await Cluster.start({ workers: 0, gatewayArgs: ['--admin', 'off'] });
  try {
    const r = await get(c.port, '/');
    assert.equal(r.status, 426);
    assert.equal(r.headers['upgrade'], 'websocket');
  } finally {
    await c.stop();
  }
});

test('--static-dir must name a directory', () => {
  const r = spawnSync(gatewayBin, ['--static-dir', join(demoDir, 'no-such-dir'), '--listen', '127.0.0.1:0', '--admin', 'off'],
    { encoding: 'utf8', timeout: 10000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--static-dir: Directory does not exist/);
});

test('framegate up serves the bundled demo unless told otherwise', { timeout: 60000 }, async () => {
  const config = (...args) => {
    const r = spawnSync(supervisorBin, ['up', '--print-config', ...args], { encoding: 'utf8', timeout: 10000 });
    assert.equal(r.status, 0, r.stderr);
    return Object.fromEntries(r.stdout.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(' = ')));
  };
  assert.equal(config()['static-dir'], realpathSync(demoDir));
  assert.equal(config('--no-demo')['static-dir'], undefined);
  assert.equal(config('--no-demo')['no-demo'], 'true');
  assert.equal(config('--static-dir', '/srv/site')['static-dir'], '/srv/site');

  // A real cluster: its gateway answers GET / with the demo page.
  const up = spawn(supervisorBin, ['up', '--listen', '127.0.0.1:0', '--workers', '1', '--no-redis',
    '--gateway-bin', gatewayBin, ...(process.env.FRAMEGATE_WORKER_BIN ? ['--worker-bin', process.env.FRAMEGATE_WORKER_BIN] : [])],
  { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FRAMEGATE_ADMIN: 'off' } });
  const exited = new Promise((resolve) => up.on('exit', (code) => resolve(code)));
  try {
    let out = '';
    const port = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no 'listening on' line:\n${out}`)), 20000);
      const onData = (c) => {
        out += c.toString();
        const m = out.match(/listening on 127\.0\.0\.1:(\d+)/);
        if (m) { clearTimeout(timer); resolve(Number(m[1])); }
      };
      up.stdout.on('data', onData);
      up.stderr.on('data', onData);
      exited.then((code) => { clearTimeout(timer); reject(new Error(`framegate up exited ${code}:\n${out}`)); });
    });
    const r = await get(port, '/');
    assert.equal(r.status, 200);
    assert.match(r.body, /<title>framegate rooms demo<\/title>/);
    // The demo's client library is clients/js/framegate.js, byte for byte:
    // the gateway serves only files under the static dir (no link out of
    // it), so the demo holds a copy, which must not drift.
    const lib = await get(port, '/framegate.js');
    assert.equal(lib.status, 200);
    assert.equal(lib.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(lib.body, readFileSync(join(repo, 'clients', 'js', 'framegate.js'), 'latin1'),
      'deploy/demo/framegate.js differs from clients/js/framegate.js: cp clients/js/framegate.js deploy/demo/');
  } finally {
    if (up.exitCode === null) {
      up.kill('SIGTERM');
      const timer = setTimeout(() => up.kill('SIGKILL'), 15000);
      await exited;
      clearTimeout(timer);
    }
  }
});
