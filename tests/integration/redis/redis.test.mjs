// Rooms across two gateways (two "hosts") through one Redis: exactly-once
// delivery, leave, room isolation, one subscription per worker with
// members, and a Redis crash in the middle of a stream of publishes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, connect, joinRoom, nextMessage, placeMembers, silentFor, sleep } from '../cluster/cluster.mjs';
import { RedisServer, until } from './redis_server.mjs';

async function startHosts(redis, extraWorkerArgs = []) {
  const opts = {
    workers: 2,
    gatewayArgs: ['--sticky-key', 'header:x-user'],
    workerArgs: ['--enable-test-apps', '--redis', redis.url, ...extraWorkerArgs],
  };
  const a = await Cluster.start(opts);
  try {
    return [a, await Cluster.start(opts)];
  } catch (e) {
    await a.stop();
    throw e;
  }
}

// Stops the clusters; returns every worker's stderr lines.
async function stopHosts(hosts) {
  const lines = [];
  for (const h of hosts) {
    await h.stop();
    for (const w of h.workers) lines.push(...w.lines.map((l) => `[${w.name}] ${l}`));
  }
  return lines;
}

test('one publish reaches every member on every worker of both hosts exactly once', async () => {
  const redis = await RedisServer.start();
  let hosts = [];
  try {
    hosts = await startHosts(redis);
    const [g1, g2] = hosts;
    const members = [...await placeMembers(g1, 1, 'g1'), ...await placeMembers(g2, 1, 'g2')];
    assert.equal(members.length, 4);
    for (const m of members) joinRoom(m, 'R');
    const outsider = await connect(g2.url('/rooms'));
    joinRoom(outsider, 'S');
    await until(() => { const n = redis.numsub('framegate:room:R', 'framegate:room:S');
      return n['framegate:room:R'] === 4 && n['framegate:room:S'] === 1; }, 'subscriptions in Redis');

    const data = '{"text":"hi \\u00e9", "n":[1, 2.50]}';
    members[0].send(`{"op":"publish","room":"R","data":${data}}`);
    // Redis numbers the room's messages: the same offset on every member.
    for (const m of members)
      assert.equal((await nextMessage(m)).data, `{"room":"R","data":${data},"offset":1}`, m.worker);
    await sleep(500);
    for (const m of members) assert.ok(await silentFor(m, 0), `duplicate delivery on ${m.worker}`);
    assert.ok(await silentFor(outsider, 0), 'a member of S received a message for R');

    // Leave: the last member of a worker leaving unsubscribes that worker.
    members[3].send(JSON.stringify({ op: 'leave', room: 'R' }));
    await until(() => redis.numsub('framegate:room:R')['framegate:room:R'] === 3, 'one subscription fewer');
    members[1].send('{"op":"publish","room":"R","data":2}');
    for (const m of members.slice(0, 3))
      assert.equal((await nextMessage(m)).data, '{"room":"R","data":2,"offset":2}', m.worker);
    await sleep(500);
    for (const m of members) assert.ok(await silentFor(m, 0), `unexpected delivery on ${m.worker}`);
    assert.ok(await silentFor(outsider, 0));
    assert.deepEqual(redis.numsub('framegate:room:R', 'framegate:room:S'),
      { 'framegate:room:R': 3, 'framegate:room:S': 1 });
    for (const m of [...members, outsider]) m.close();
  } finally {
    await stopHosts(hosts);
    await redis.kill();
  }
});

// Without history (--history-size 0) the publisher's own members keep
// receiving during an outage (delivered locally); with history, every
// member gets the numbered copy from Redis once it is back. Either way no
// duplicates, order kept, and every miss is a counted drop.
for (const history of [false, true])
test(`a Redis crash during a stream (${history ? 'with history' : 'without history: local delivery goes on'}): ` +
  'no duplicates, drops counted', async () => {
  // With history, a Redis that keeps its data (as production's should):
  // the numbering goes on across the restart (a Redis that loses it starts
  // a new epoch, redis_history_test).
  const redis = await RedisServer.start({ persistent: history });
  let hosts = [];
  let lines = [];
  let all = [];
  let passed = false;
  const total = 150;  // every 20 ms for 3 s, through the outage
  const after = 10;  // once every subscription is back
  try {
    // A small buffer, so that the outage overflows it and drops are counted.
    hosts = await startHosts(redis, ['--redis-buffer', '20', '--history-size', history ? '1000' : '0']);
    const [g1, g2] = hosts;
    const g1Members = await placeMembers(g1, 2, 'g1');
    const publisher = g1Members[0];
    const local = g1Members.filter((m) => m.worker === publisher.worker);
    const remote = [...g1Members.filter((m) => m.worker !== publisher.worker), ...await placeMembers(g2, 1, 'g2')];
    assert.equal(local.length, 2);
    assert.equal(remote.length, 4);
    all = [...local, ...remote];
    for (const m of all) {
      m.got = [];
      m.on('message', (d) => {
        const msg = JSON.parse(d.toString());
        m.got.push({ n: msg.data, offset: msg.offset, at: Date.now() });
      });
      joinRoom(m, 'R');
    }
    await until(() => redis.numsub('framegate:room:R')['framegate:room:R'] === 4, 'subscriptions in Redis');

    let sent = 0;
    const stream = new Promise((resolve) => {
      const timer = setInterval(() => {
        publisher.send(JSON.stringify({ op: 'publish', room: 'R', data: ++sent }));
        if (sent === total) { clearInterval(timer); resolve(); }
      }, 20);
    });
    await sleep(500);
    await redis.kill('SIGKILL');
    const killedAt = Date.now();
    const sentAtKill = sent;
    await sleep(1000);
    const restartedAt = Date.now();
    const sentAtRestart = sent;
    await redis.restart();
    await stream;

    // Delivery resumes once recovery is over: every worker's subscription
    // is back in Redis (however long a busy machine makes that take; the
    // stream's own end may come before it). Publishes from then on reach
    // every member.
    await until(() => redis.numsub('framegate:room:R')['framegate:room:R'] === 4, 'every subscription back', 15000);
    for (let n = total + 1; n <= total + after; ++n) {
      publisher.send(JSON.stringify({ op: 'publish', room: 'R', data: n }));
      await sleep(20);
    }
    const last = total + after;
    await until(() => all.every((m) => m.got.some((g) => g.n === last)), 'the last publish on every member', 15000);
    await sleep(500);

    for (const m of all) {
      const ns = m.got.map((g) => g.n);
      assert.equal(new Set(ns).size, ns.length, `${m.worker} received a number twice`);
    }
    for (const m of history ? [] : local) {
      assert.equal(m.got.length, last, `${m.worker}: a member on the publisher's worker missed publishes`);
      const during = m.got.filter((g) => g.at > killedAt + 100 && g.at < restartedAt).length;
      assert.ok(during >= (sentAtRestart - sentAtKill) / 2,
        `${m.worker}: only ${during} deliveries during the outage`);
    }

    lines = await stopHosts(hosts);
    hosts = [];
    const counter = (name) => lines.map((l) => l.match(new RegExp(`redis broker: .*\\b${name}=(\\d+)`)))
      .filter(Boolean).map((m) => Number(m[1]));
    const drops = counter('dropped');
    assert.equal(drops.length, 4, 'every worker logs its broker counters at exit');
    const dropped = drops.reduce((a, b) => a + b, 0);
    const counted = counter('missed').reduce((a, b) => a + b, 0);
    assert.ok(dropped > 0, 'the outage was long enough to overflow a 20-publish buffer');
    for (const m of all) {
      // Numbered exactly when history is on, and in order.
      const offsets = m.got.map((g) => g.offset);
      if (history) assert.deepEqual(offsets, [...offsets].sort((a, b) => a - b), `${m.worker}: offsets out of order`);
      else assert.ok(offsets.every((o) => o === undefined), `${m.worker}: an offset without history`);
    }
    for (const m of history ? all : remote) {
      // Every publish dropped from the buffer is missed by every remote member, and
      // nothing else is missed without a count: the flush after the outage waits
      // until the subscribers from before it are back (PUBSUB NUMSUB), and what a
      // flush still sends too early is counted as missed.
      const missed = last - m.got.length;
      assert.ok(missed >= dropped, `${m.worker} missed ${missed} publishes, fewer than the ${dropped} dropped`);
      assert.ok(missed <= dropped + counted,
        `${m.worker} missed ${missed} publishes: ${dropped} dropped and ${counted} counted as missed`);
      const ns = m.got.map((g) => g.n);
      for (let n = total + 1; n <= last; ++n) assert.ok(ns.includes(n), `${m.worker} missed ${n} after recovery`);
      assert.deepEqual(ns, [...ns].sort((a, b) => a - b), `${m.worker}: one publisher's messages out of order`);
    }
    for (const m of all) m.close();
    passed = true;
  } finally {
    if (hosts.length) lines = await stopHosts(hosts);
    await redis.dispose();
    if (!passed) {
      // What each member missed, next to the workers' own account (reconnects, resubscriptions, drops).
      for (const m of all) {
        const got = new Set((m.got ?? []).map((g) => g.n));
        const missing = [];
        for (let n = 1; n <= total + after; ++n) if (!got.has(n)) missing.push(n);
        console.error(`${m.worker}: missing ${missing.join(',') || 'none'}`);
      }
    }
    if (!passed || process.env.FRAMEGATE_TEST_VERBOSE) console.error(lines.join('\n'));
  }
});

// PUBLISH with the payload from stdin (`-x`): binary-safe and not bound by
// the size of one command-line argument.
function publishRaw(redis, channel, payload) {
  return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(redis.port), '-x', 'PUBLISH', channel],
    { input: payload, encoding: 'utf8', timeout: 5000 }).trim();
}

// Issue #12: `PUBLISH framegate:room:R <2 MiB junk>` from any Redis client
// made each subscribed worker forward it; the gateway's link decoder refused
// the envelope and closed the link, and every connection of those workers
// (every path) was closed with 1013. Non-UTF-8 payloads reached browsers.
test('junk published into a room is dropped and counted: nobody is closed, the room goes on', async () => {
  const redis = await RedisServer.start();
  let hosts = [];
  let lines = [];
  try {
    const c = await Cluster.start({
      workers: 2,
      gatewayArgs: ['--sticky-key', 'header:x-user', '--max-message-size', '1048576'],
      workerArgs: ['--enable-test-apps', '--redis', redis.url, '--admin', 'off'],
    });
    hosts = [c];
    const members = await placeMembers(c, 1);
    assert.equal(members.length, 2);
    for (const m of members) joinRoom(m, 'R');
    const echo = await connect(c.url('/echo'), { headers: { 'x-user': 'echo' } });
    await until(() => redis.numsub('framegate:room:R')['framegate:room:R'] === 2, 'subscriptions in Redis');
    const closes = [];
    for (const ws of [...members, echo]) ws.closed.then((e) => closes.push(e));

    const ch = 'framegate:room:R';
    const header = 'fg1 0000000000000001 0000000000000001\n';
    const junk = Buffer.alloc(2 * 1024 * 1024, 'j');
    assert.equal(publishRaw(redis, ch, junk), '2');                                       // foreign, too big
    assert.equal(publishRaw(redis, ch, Buffer.concat([Buffer.from(header), junk])), '2');  // framegate, too big
    assert.equal(publishRaw(redis, ch, Buffer.from([0x63, 0x61, 0x66, 0xc3])), '2');      // foreign, not UTF-8
    assert.equal(publishRaw(redis, ch, Buffer.concat([Buffer.from('fg1 0000000000000001 0000000000000002\n'),
      Buffer.from([0xff, 0xfe])])), '2');                                                  // framegate, not UTF-8
    assert.equal(publishRaw(redis, ch, Buffer.from('{"room":"R","data":"foreign"}')), '2'); // foreign: dropped by default

    members[0].send('{"op":"publish","room":"R","data":1}');
    // Raw PUBLISHes take no offset: only what the cluster publishes is numbered.
    for (const m of members) assert.equal((await nextMessage(m)).data, '{"room":"R","data":1,"offset":1}', m.worker);
    echo.send('still here');
    assert.equal((await nextMessage(echo)).data, 'still here');
    await sleep(300);
    for (const m of members) assert.ok(await silentFor(m, 0), `junk delivered on ${m.worker}`);
    assert.deepEqual(closes, [], 'a connection was closed');
    for (const ws of [...members, echo]) ws.close();
  } finally {
    lines = await stopHosts(hosts);
    await redis.kill();
  }
  // Each worker counted the four framegate-or-foreign junk messages and the foreign one.
  const counts = lines.map((l) => l.match(/\[(w\d)\].*redis broker:.* rejected=(\d+)/)).filter(Boolean);
  assert.equal(counts.length, 2, lines.join('\n'));
  for (const m of counts) assert.equal(Number(m[2]), 5, `${m[1]} rejected`);
});

// The origin id of the first framegate envelope published on `channel`
// after the call, as any subscriber sees it (a raw RESP subscription).
function watchOrigin(redis, channel) {
  const sock = createConnection({ host: '127.0.0.1', port: redis.port });
  sock.write(`SUBSCRIBE ${channel}\r\n`);
  let seen = '';
  const origin = new Promise((resolve) => sock.on('data', (d) => {
    seen += d.toString('latin1');
    const m = seen.match(/fg[12] ([0-9a-f]{16}) /);
    if (m) { sock.destroy(); resolve(m[1]); }
  }));
  return { origin, close: () => sock.destroy() };
}

// The next message of `ws` whose data is not `skip` (forged injections).
async function nextMessageExcept(ws, skip) {
  for (;;) {
    const m = await nextMessage(ws);
    if (m.data !== skip) return m;
  }
}

// Issue #12: `fg1 <origin> ffffffffffffffff` made every later publish of
// that worker look like a copy already delivered: silenced until restart.
test('a forged envelope header does not silence the worker whose origin it names', async () => {
  const redis = await RedisServer.start();
  let hosts = [];
  const watch = watchOrigin(redis, 'framegate:room:R');
  try {
    const c = await Cluster.start({
      workers: 2,
      gatewayArgs: ['--sticky-key', 'header:x-user'],
      workerArgs: ['--enable-test-apps', '--redis', redis.url, '--admin', 'off'],
    });
    hosts = [c];
    const members = await placeMembers(c, 1);
    for (const m of members) joinRoom(m, 'R');
    await until(() => redis.numsub('framegate:room:R')['framegate:room:R'] === 3, 'subscriptions in Redis');
    members[0].send('{"op":"publish","room":"R","data":1}');
    // Raw PUBLISHes take no offset: only what the cluster publishes is numbered.
    for (const m of members) assert.equal((await nextMessage(m)).data, '{"room":"R","data":1,"offset":1}', m.worker);
    const origin = await watch.origin;

    const forged = `{"room":"R","data":"forged"}`;
    for (const seq of ['ffffffffffffffff', '0000000000000001', '0000010000000000'])
      publishRaw(redis, 'framegate:room:R', Buffer.from(`fg1 ${origin} ${seq}\n${forged}`));
    for (const n of [2, 3, 4]) {
      members[0].send(`{"op":"publish","room":"R","data":${n}}`);
      for (const m of members)
        assert.equal((await nextMessageExcept(m, forged)).data, `{"room":"R","data":${n},"offset":${n}}`,
          `${m.worker}: publish ${n}`);
    }
    for (const m of members) m.close();
  } finally {
    watch.close();
    await stopHosts(hosts);
    await redis.kill();
  }
});

test('with --redis-secret-file only the cluster can put messages into a room', async () => {
  const redis = await RedisServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'fg-secret-'));
  const secretFile = join(dir, 'secret');
  writeFileSync(secretFile, 'cluster secret\n', { mode: 0o600 });
  let hosts = [];
  let lines = [];
  try {
    const c = await Cluster.start({
      workers: 2,
      gatewayArgs: ['--sticky-key', 'header:x-user'],
      workerArgs: ['--enable-test-apps', '--redis', redis.url, '--admin', 'off', '--redis-secret-file', secretFile],
    });
    hosts = [c];
    const members = await placeMembers(c, 1);
    for (const m of members) joinRoom(m, 'R');
    await until(() => redis.numsub('framegate:room:R')['framegate:room:R'] === 2, 'subscriptions in Redis');
    const injected = '{"room":"R","data":"injected"}';
    publishRaw(redis, 'framegate:room:R', Buffer.from(`fg1 0000000000000001 0000000000000001\n${injected}`));
    publishRaw(redis, 'framegate:room:R', Buffer.from(injected));
    for (const n of [1, 2]) {
      members[n - 1].send(`{"op":"publish","room":"R","data":${n}}`);
      for (const m of members)
        assert.equal((await nextMessage(m)).data, `{"room":"R","data":${n},"offset":${n}}`, m.worker);
    }
    await sleep(200);
    for (const m of members) assert.ok(await silentFor(m, 0), `injected message delivered on ${m.worker}`);
    for (const m of members) m.close();
  } finally {
    lines = await stopHosts(hosts);
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  const counts = lines.map((l) => l.match(/\[(w\d)\].*redis broker:.* rejected=(\d+)/)).filter(Boolean);
  assert.equal(counts.length, 2, lines.join('\n'));
  for (const m of counts) assert.equal(Number(m[2]), 2, `${m[1]} rejected`);
});
