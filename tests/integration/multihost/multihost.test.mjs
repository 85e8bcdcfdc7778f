// Three simulated hosts (network namespaces, deploy/multihost/multihost.sh)
// behind nginx: clients spread over every host, rooms deliver each message
// exactly once across hosts, a host whose link goes down loses its clients
// to the others through nginx, a Redis primary killed and back (or the one
// Redis restarted) leaves rooms working, and `down` leaves nothing behind
// (and names a worker that did not stop cleanly).
//
// Needs root (network namespaces): run as anyone else it fails, with the
// script's reason. It runs over a Redis Cluster spread over the hosts;
// FRAMEGATE_MULTIHOST_REDIS_MODE=single over one redis-server on host 1.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const here = dirname(fileURLToPath(import.meta.url));
const script = join(here, '..', '..', '..', 'deploy', 'multihost', 'multihost.sh');
// FRAMEGATE_BIN is build/bin/framegate: the script wants the build directory.
const buildDir = process.env.FRAMEGATE_BIN ? dirname(dirname(process.env.FRAMEGATE_BIN))
  : join(here, '..', '..', '..', 'build');
const redisMode = process.env.FRAMEGATE_MULTIHOST_REDIS_MODE ?? 'cluster';
const ROOMS = ['lobby', 'news'];
const NGINX_CLIENTS = 24;
const LINK_DOWN_HOST = 2;
const REDIS_KILL_HOST = 1;  // single mode: where the one redis-server runs
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const stateDir = mkdtempSync(join(tmpdir(), 'fg-multihost-'));
let upStarted = false;

function multihost(...args) {
  const r = spawnSync(script, [...args, '--state-dir', stateDir], { encoding: 'utf8', timeout: 90_000 });
  if (r.status !== 0) {
    throw new Error(`multihost.sh ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stdout}${r.stderr}`);
  }
  return r.stdout + r.stderr;
}

async function waitUntil(what, predicate, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await predicate();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

async function metric(hostPort, name) {
  const res = await fetch(`http://${hostPort}/metrics`, { signal: AbortSignal.timeout(2000) });
  const text = await res.text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  assert.ok(line, `${hostPort} exports no ${name}`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

// A /rooms client that joins ROOMS on every (re)connection and notices a
// silent peer with its own pings: a host whose link is down sends no RST,
// so only a missing pong tells.
class Client {
  constructor(name, url, localAddress) {
    Object.assign(this, { name, url, localAddress });
    this.received = [];
    this.connections = 0;
    this.stopped = false;
    this.connect();
  }

  connect() {
    const ws = new WebSocket(this.url, { localAddress: this.localAddress, handshakeTimeout: 5000 });
    this.ws = ws;
    this.joined = new Set();
    this.lastPong = 0;
    ws.on('open', () => {
      this.connections += 1;
      this.lastPong = Date.now();
      for (const room of ROOMS) ws.send(JSON.stringify({ op: 'join', room, id: `join-${room}` }));
      this.pinger = setInterval(() => {
        if (Date.now() - this.lastPong > 2000) ws.terminate();
        else ws.ping();
      }, 400);
    });
    ws.on('pong', () => { this.lastPong = Date.now(); });
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw));
      if (m.joined !== undefined) this.joined.add(m.joined);
      else if (m.room !== undefined && m.data !== undefined) this.received.push(m);
      else if (m.error !== undefined) this.errors = [...(this.errors ?? []), m.error];
    });
    ws.on('error', () => {});
    ws.on('close', () => {
      clearInterval(this.pinger);
      if (!this.stopped) setTimeout(() => this.connect(), 200);
    });
  }

  // Open, joined, and answered a ping sent after `since`.
  readySince(since) {
    return this.ws.readyState === WebSocket.OPEN && this.joined.size === ROOMS.length && this.lastPong > since;
  }

  publish(round) {
    for (const room of ROOMS) this.ws.send(JSON.stringify({ op: 'publish', room, data: { round, from: this.name } }));
  }

  stop() {
    this.stopped = true;
    clearInterval(this.pinger);
    this.ws.terminate();
  }
}

// Every client publishes once into every room; every client must receive
// each of those messages exactly once.
async function roundTrip(clients, round) {
  for (const c of clients) c.received = c.received.filter((m) => m.data.round !== round);
  for (const c of clients) c.publish(round);
  const expected = clients.length * ROOMS.length;
  const ofRound = (c) => c.received.filter((m) => m.data.round === round);
  await waitUntil(`round ${round}: ${expected} messages at each of ${clients.length} clients`,
    () => clients.every((c) => ofRound(c).length >= expected), 15_000).catch((e) => {
    const short = clients.filter((c) => ofRound(c).length < expected).map((c) => `${c.name}:${ofRound(c).length}`);
    // What the hosts said about it, before `down` removes their logs.
    for (const host of [1, 2, 3]) {
      const log = join(stateDir, 'logs', `h${host}-framegate.log`);
      if (existsSync(log)) console.log(`# h${host}: ` + readFileSync(log, 'utf8').split('\n').slice(-25).join('\n# '));
    }
    throw new Error(`${e.message}; short: ${short.join(' ')}`);
  });
  await sleep(500);  // time for a duplicate to show up
  for (const c of clients) {
    const seen = new Map();
    for (const m of ofRound(c)) {
      const key = `${m.room}/${m.data.from}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    for (const sender of clients) {
      for (const room of ROOMS) {
        assert.equal(seen.get(`${room}/${sender.name}`), 1,
          `round ${round}: ${c.name} got ${room} from ${sender.name} ${seen.get(`${room}/${sender.name}`) ?? 0} times`);
      }
    }
  }
}

const clients = [];
after(() => {
  for (const c of clients) c.stop();
  if (upStarted && existsSync(join(stateDir, 'resources'))) {
    spawnSync(script, ['down', '--state-dir', stateDir], { stdio: 'inherit' });
  }
  rmSync(stateDir, { recursive: true, force: true });
});

test(`three hosts behind nginx (redis ${redisMode}): spread, link loss, Redis loss, clean down`, { timeout: 150_000 },
  async () => {
    const t0 = Date.now();
    upStarted = true;
    multihost('up', '--hosts', '3', '--redis-mode', redisMode, '--nginx', '--prometheus', '--workers-per-host', '1',
      '--build-dir', buildDir);
    const run = JSON.parse(readFileSync(join(stateDir, 'run.json'), 'utf8'));
    assert.equal(run.hosts.length, 3);
    for (const addr of [run.entry, run.root_addr, ...run.hosts.map((h) => h.addr)]) {
      assert.match(addr, /^198\.1[89]\./, 'every address is in 198.18.0.0/15');
    }
    console.log(`# up in ${Date.now() - t0} ms: ${run.prefix}, entry ${run.entry}`);

    // Through nginx, each client from its own source address (nginx hashes on
    // it), and one client straight to each host's gateway.
    const viaNginx = run.client_addrs.slice(0, NGINX_CLIENTS)
      .map((addr, i) => new Client(`n${i}`, `ws://${run.entry}/rooms`, addr));
    const direct = run.hosts.map((h) => new Client(`d${h.index}`, `ws://${h.gateway}/rooms`));
    clients.push(...viaNginx, ...direct);
    await waitUntil('every client joined', () => clients.every((c) => c.readySince(0)), 15_000);
    const perHost = await Promise.all(run.hosts.map((h) => metric(h.admin, 'framegate_gateway_connections_active')));
    console.log(`# connections per host: ${perHost.join(' ')}`);
    assert.equal(perHost.reduce((a, b) => a + b, 0), clients.length);
    perHost.forEach((n, i) => assert.ok(n >= 2, `h${i + 1} got no client through nginx (${n} connections)`));
    await roundTrip(clients, 1);

    // Host 2's link goes down: its clients notice (no pong), reconnect
    // through nginx, which times out on host 2, marks it failed and moves on.
    const onDownHost = perHost[LINK_DOWN_HOST - 1] - 1;
    const downAt = Date.now();
    multihost('link-down', String(LINK_DOWN_HOST));
    direct[LINK_DOWN_HOST - 1].stop();
    const live = clients.filter((c) => !c.stopped);
    const connectionsBefore = viaNginx.reduce((a, c) => a + c.connections, 0);
    await waitUntil('every live client answering pings after the link went down',
      () => live.every((c) => c.readySince(downAt + 500)), 30_000);
    const reconnects = viaNginx.reduce((a, c) => a + c.connections, 0) - connectionsBefore;
    assert.equal(reconnects, onDownHost, `the ${onDownHost} clients of h${LINK_DOWN_HOST} reconnected`);
    const others = run.hosts.filter((h) => h.index !== LINK_DOWN_HOST);
    const after = await Promise.all(others.map((h) => metric(h.admin, 'framegate_gateway_connections_active')));
    assert.equal(after.reduce((a, b) => a + b, 0), live.length, 'every live client is on a host that is up');
    console.log(`# link down: ${reconnects} clients moved in ${Date.now() - downAt} ms`);
    await roundTrip(live, 2);

    // The link comes back; then Redis loses its primary on another host.
    multihost('link-up', String(LINK_DOWN_HOST));
    await waitUntil('status all ok after link-up', () => {
      const r = spawnSync(script, ['status', '--state-dir', stateDir], { encoding: 'utf8' });
      return r.status === 0;
    }, 30_000);
    const workerAdmins = run.hosts.flatMap((h) => h.worker_admin);
    const reconnectsBefore = await Promise.all(workerAdmins.map((a) => metric(a, 'framegate_worker_broker_reconnects_total')));
    const killedAt = Date.now();
    console.log(multihost('kill-redis-primary', '--on-host', String(REDIS_KILL_HOST)).trim().replace(/^/gm, '# '));
    // Single mode: every worker lost its Redis and must have reconnected.
    // Cluster mode: only those on the killed primary's shard did.
    await waitUntil('every worker on every host back on Redis', async () => {
      const [ups, reconnects] = await Promise.all(['framegate_worker_broker_up', 'framegate_worker_broker_reconnects_total']
        .map((name) => Promise.all(workerAdmins.map((a) => metric(a, name).catch(() => -1)))));
      return ups.every((v) => v === 1) && (redisMode !== 'single' || reconnects.every((v, i) => v > reconnectsBefore[i]));
    }, 30_000);
    console.log(`# redis back for every worker ${Date.now() - killedAt} ms after the kill`);
    await waitUntil('every live client connected after the Redis loss',
      () => live.every((c) => c.readySince(killedAt)), 15_000);
    await roundTrip(live, 3);

    // Prometheus found every host's gateway and worker through the file-based
    // discovery, with their host label, and scrapes them (host 2 again too).
    await waitUntil('Prometheus scraping every gateway and worker of every host', async () => {
      const res = await fetch(`http://${run.prometheus}/api/v1/targets?state=active`);
      const targets = (await res.json()).data.activeTargets;
      const up = targets.filter((t) => t.health === 'up').map((t) => `${t.labels.job}@${t.labels.host}`).sort();
      return JSON.stringify(up) === JSON.stringify(['framegate-gateway@h1', 'framegate-gateway@h2',
        'framegate-gateway@h3', 'framegate-worker@h1', 'framegate-worker@h2', 'framegate-worker@h3']);
    }, 30_000);
    const query = await fetch(`http://${run.prometheus}/api/v1/query?query=` +
      encodeURIComponent('sum by (host) (framegate_gateway_connections_active)'));
    const hostsSeen = (await query.json()).data.result.map((r) => r.metric.host).sort();
    assert.deepEqual(hostsSeen, ['h1', 'h2', 'h3'], 'a per-host breakdown of the gateways');
    // The derived config keeps deploy/prometheus/alerts.yml: every alert
    // loaded and evaluated against these hosts' series without an error.
    await waitUntil('Prometheus evaluating framegate\'s alerting rules', async () => {
      const res = await fetch(`http://${run.prometheus}/api/v1/rules?type=alert`);
      const rules = (await res.json()).data.groups.flatMap((g) => g.rules);
      const evaluated = rules.filter((r) => r.health === 'ok' && !r.lastEvaluation.startsWith('0001-'));
      return rules.length >= 20 && evaluated.length === rules.length &&
        rules.every((r) => r.name.startsWith('Framegate'));
    }, 30_000);

    for (const c of clients) c.stop();
    if (redisMode === 'single') {
      // A worker that will not stop (SIGSTOPped: its supervisor kills it at
      // the stop timeout) is named by `down`, which fails after removing
      // everything all the same.
      const log = readFileSync(join(stateDir, 'logs', 'h3-framegate.log'), 'utf8');
      const stalled = Number([...log.matchAll(/started w1 \(pid (\d+)\)/g)].pop()[1]);
      process.kill(stalled, 'SIGSTOP');
      const r = spawnSync(script, ['down', '--state-dir', stateDir], { encoding: 'utf8', timeout: 90_000 });
      assert.equal(r.status, 1, `down after a stalled worker: ${r.stdout}${r.stderr}`);
      assert.match(r.stdout + r.stderr, new RegExp(`h3: w1 \\(pid ${stalled}\\) stopped: killed by signal 9`));
    } else {
      multihost('down');
    }
    upStarted = false;
    const namespaces = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout;
    assert.ok(!namespaces.includes(run.prefix), `namespaces left: ${namespaces}`);
    const links = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout;
    assert.ok(!links.includes(run.root_link), `link ${run.root_link} left`);
    const routes = spawnSync('ip', ['-4', 'route', 'show'], { encoding: 'utf8' }).stdout;
    assert.ok(!routes.includes(run.root_link), `routes left: ${routes}`);
    assert.ok(!existsSync(join(stateDir, 'resources')), 'the state directory is gone');
    console.log(`# whole run ${Date.now() - t0} ms`);
  });
