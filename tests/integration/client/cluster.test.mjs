// The client library (clients/js/framegate.js) against real clusters:
// Redis history, workers killed under a member, tokens that expire (4001),
// and the ops answered by id. What a member got must be the room's offsets
// from its join to the top, each once and in order: Redis numbers every
// message it keeps, so no gap means nothing lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { FramegateClient, FramegateError } from '../../../clients/js/framegate.js';
import { Cluster, connect, sleep } from '../cluster/cluster.mjs';
import { RedisServer, until } from '../redis/redis_server.mjs';
import { hs256Secret } from './tokens.mjs';

const ROOM = 'lib';
const timings = { WebSocket, minReconnectDelay: 50, maxReconnectDelay: 400 };

// A library member of ROOM; got: [{ data, offset }] as the app received them.
async function member(url, options = {}) {
  const client = new FramegateClient(url, { ...timings, ...options });
  const m = { client, got: [], events: [] };
  for (const e of ['reconnecting', 'recovered', 'unrecovered']) client.on(e, (d) => m.events.push([e, d]));
  await client.connect();
  m.joined = await client.join(ROOM, { onMessage: (data, { offset }) => m.got.push({ data, offset }) });
  return m;
}

// The member got every offset after its join up to the marker, once, in order.
function assertWhole(m, what) {
  const offsets = m.got.map((g) => g.offset);
  const expected = Array.from({ length: offsets.length }, (_, i) => m.joined.offset + 1 + i);
  assert.deepEqual(offsets, expected, `${what}: offsets not contiguous from the join`);
  const seqs = m.got.map((g) => g.data.n);
  assert.equal(new Set(seqs).size, seqs.length, `${what}: a message twice`);
  assert.deepEqual(m.events.filter(([e]) => e === 'unrecovered'), [], `${what}: unrecovered`);
}

// Publishes {n} on a raw connection every `everyMs` until stop() (plain ops:
// no answer asked), then a marker; resolves with the number sent.
function publisher(ws, everyMs) {
  let running = true;
  let n = 0;
  const done = (async () => {
    while (running) {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ op: 'publish', room: ROOM, data: { n: ++n } }));
      await sleep(everyMs);
    }
    ws.send(JSON.stringify({ op: 'publish', room: ROOM, data: { n: 'end' } }));
    return n;
  })();
  return { stop: () => { running = false; return done; } };
}

const sawEnd = (m) => m.got.some((g) => g.data.n === 'end');

test('workers killed and Redis subscriptions cut under a member: it recovers the gaps, each message once, in order', { timeout: 90000 }, async (t) => {
  const redis = await RedisServer.start();
  const hosts = [];
  let m;
  try {
    // The publisher on a host of its own, so every message reaches the
    // member's host through Redis; the worker a member fails over to has
    // no subscription to the room yet, so the failover leaves a gap.
    for (const workers of [2, 1])
      hosts.push(await Cluster.start({ workers, gatewayArgs: ['--admin', 'off'],
        workerArgs: ['--redis', redis.url, '--history-size', '10000'] }));
    m = await member(hosts[0].url('/rooms'));
    const pub = publisher(await connect(hosts[1].url('/rooms')), 5);
    // Each worker killed and restarted in turn: the member's worker dies once
    // at least. Then the workers' Redis subscriptions are cut: what is
    // published before they subscribe again reaches the member only from
    // the history.
    for (const i of [0, 1]) {
      await sleep(300);
      await hosts[0].crashWorker(i);
      await sleep(300);
      await hosts[0].restartWorker(i);
    }
    for (let k = 0; k < 3; ++k) {
      await sleep(300);
      redis.cli('CLIENT', 'KILL', 'TYPE', 'pubsub');
    }
    await sleep(300);
    const sent = await pub.stop();
    await until(() => sawEnd(m), 'the end marker', 20000);
    assertWhole(m, 'the member');
    assert.equal(m.got.length, sent + 1, 'not every message sent arrived');
    const recoveries = m.events.filter(([e]) => e === 'recovered').length;
    t.diagnostic(`${sent} messages, ${recoveries} recoveries`);
    assert.ok(recoveries >= 1, 'no gap was recovered: the test did not test recovery');
  } finally {
    m?.client.close();
    for (const h of hosts) await h.stop();
    await redis.kill();
  }
});

test('tokens expiring (4001): getToken per connect, rejoined with since, nothing lost', { timeout: 90000 }, async () => {
  const redis = await RedisServer.start();
  const tmp = mkdtempSync(join(tmpdir(), 'fg-client-'));
  let c, m;
  try {
    const secret = hs256Secret(tmp);
    c = await Cluster.start({ workers: 2, gatewayArgs: ['--admin', 'off', '--jwt-secret-file', secret.file, '--jwt-leeway', '0'],
      workerArgs: ['--redis', redis.url, '--history-size', '10000'] });
    let asked = 0;
    const shortLived = () => { asked += 1; return secret.sign({ sub: 'member', exp: Math.floor(Date.now() / 1000) + 2 }); };
    m = await member(c.url('/rooms'), { getToken: shortLived });
    const pub = publisher(await connect(`${c.url('/rooms')}?token=${secret.sign({ sub: 'publisher' })}`), 10);
    await until(() => m.events.filter(([e, d]) => e === 'reconnecting' && d.code === 4001).length >= 2,
      'two expiries', 20000);
    await pub.stop();
    await until(() => sawEnd(m), 'the end marker', 20000);
    assertWhole(m, 'the member');
    assert.ok(asked >= 3, `getToken asked ${asked} times for 3 connections`);
    const expiries = m.events.filter(([e]) => e === 'reconnecting');
    assert.ok(expiries.every(([, d]) => d.code === 4001 && d.reason === 'token expired'), JSON.stringify(expiries));
  } finally {
    m?.client.close();
    if (c) await c.stop();
    await redis.kill();
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('ops answered by id: publish resolves with its offset, a forbidden room rejects, presence lists users', { timeout: 60000 }, async () => {
  const redis = await RedisServer.start();
  const tmp = mkdtempSync(join(tmpdir(), 'fg-client-'));
  const clients = [];
  let c;
  try {
    const secret = hs256Secret(tmp);
    c = await Cluster.start({ workers: 2, gatewayArgs: ['--admin', 'off', '--jwt-secret-file', secret.file],
      workerArgs: ['--redis', redis.url, '--history-size', '100'] });
    const a = await member(c.url('/rooms'), { token: secret.sign({ sub: 'alice', rooms: [ROOM] }) });
    const b = await member(c.url('/rooms'), { token: secret.sign({ sub: 'bob' }) });
    clients.push(a.client, b.client);
    const answers = await Promise.all([1, 2, 3].map((n) => a.client.publish(ROOM, { n })));
    assert.deepEqual(answers.map((x) => x.published), [ROOM, ROOM, ROOM]);
    const offsets = answers.map((x) => x.offset);
    assert.deepEqual([...offsets].sort((x, y) => x - y), [1, 2, 3], JSON.stringify(answers));
    await until(() => b.got.length === 3, 'bob got three');
    for (const [i, x] of answers.entries()) assert.deepEqual(b.got.find((g) => g.data.n === i + 1).offset, x.offset);

    await assert.rejects(a.client.publish('elsewhere', 1), (e) => e instanceof FramegateError && /^forbidden: /.test(e.message));
    await assert.rejects(a.client.join('elsewhere'), (e) => e instanceof FramegateError && /^forbidden: /.test(e.message));

    const members = await b.client.presence(ROOM);
    assert.deepEqual(members.map((x) => [x.user, x.connections]).sort(), [['alice', 1], ['bob', 1]]);
  } finally {
    for (const cl of clients) cl.close();
    if (c) await c.stop();
    await redis.kill();
    rmSync(tmp, { recursive: true, force: true });
  }
});
