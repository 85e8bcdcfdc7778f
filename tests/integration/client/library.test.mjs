// The client library (clients/js/framegate.js) against a fake /rooms server
// (fake_server.mjs) that tests steer: reconnection and its backoff, tokens
// per connect, ids settling promises, recovery after gaps and reconnects,
// repeats dropped, unrecovered positions surfaced, the state events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { FramegateClient, FramegateError, backoffDelay } from '../../../clients/js/framegate.js';
import { until } from '../redis/redis_server.mjs';
import { FakeServer } from './fake_server.mjs';

const fast = { WebSocket, minReconnectDelay: 10, maxReconnectDelay: 40 };

// A client with every event recorded in client.events, [name, detail].
function recorded(url, options) {
  const c = new FramegateClient(url, { ...fast, ...options });
  c.events = [];
  for (const e of ['connecting', 'open', 'reconnecting', 'closed', 'error', 'recovered', 'unrecovered', 'presence'])
    c.on(e, (detail) => c.events.push([e, detail]));
  return c;
}

// Joins room with a list that collects what the app receives: [data, offset].
async function member(client, room, options = {}) {
  const got = [];
  const answer = await client.join(room, { onMessage: (data, { offset }) => got.push([data, offset]), ...options });
  return { got, answer };
}

const datas = (got) => got.map(([d]) => d);
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function withServer(options, fn) {
  const server = await FakeServer.start(options);
  const clients = [];
  try {
    await fn(server, (url, o) => { const c = recorded(url, o); clients.push(c); return c; });
  } finally {
    for (const c of clients) c.close();
    await server.stop();
  }
}

test('backoffDelay: exponential ceiling, capped, never under the minimum', () => {
  const opts = (random) => ({ minReconnectDelay: 100, maxReconnectDelay: 1000, random });
  assert.equal(backoffDelay(1, opts(() => 0)), 100);
  assert.equal(backoffDelay(1, opts(() => 1)), 200);
  assert.equal(backoffDelay(2, opts(() => 1)), 400);
  assert.equal(backoffDelay(3, opts(() => 1)), 800);
  assert.equal(backoffDelay(4, opts(() => 1)), 1000);
  assert.equal(backoffDelay(500, opts(() => 1)), 1000);
  assert.equal(backoffDelay(3, opts(() => 0.5)), 450);
});

test('refused handshakes are retried with jittered delays inside the backoff bounds', async () => {
  await withServer({}, async (server, client) => {
    server.refuse = 8;
    const c = client(server.url(), { minReconnectDelay: 5, maxReconnectDelay: 60 });
    await c.connect();
    const delays = c.events.filter(([e]) => e === 'reconnecting').map(([, d]) => d);
    assert.equal(delays.length, 8, 'one retry per refusal');
    delays.forEach((d, i) => {
      assert.equal(d.attempt, i + 1);
      const ceiling = Math.min(60, 5 * 2 ** d.attempt);
      assert.ok(d.delay >= 5 && d.delay <= ceiling, `attempt ${d.attempt}: ${d.delay} outside [5, ${ceiling}]`);
    });
    assert.ok(new Set(delays.map((d) => d.delay)).size > 1, 'no jitter: every delay the same');
    assert.equal(server.handshakes.length, 9);
    // An open connection starts the count again.
    server.closeAll(1001, 'going away');
    await until(() => c.events.filter(([e]) => e === 'open').length === 2, 'a second open');
    assert.equal(c.events.filter(([e]) => e === 'reconnecting').at(-1)[1].attempt, 1);
  });
});

test('state events come in order: connecting, open, reconnecting (delay, code), connecting, open, closed', async () => {
  await withServer({}, async (server, client) => {
    const c = client(server.url());
    assert.equal(c.state, 'idle');
    await c.connect();
    assert.equal(c.state, 'open');
    server.closeAll(4001, 'token expired');
    await until(() => c.events.filter(([e]) => e === 'open').length === 2, 'the reconnect');
    c.close();
    assert.equal(c.state, 'closed');
    const names = c.events.map(([e]) => e).filter((e) => e !== 'error');
    assert.deepEqual(names, ['connecting', 'open', 'reconnecting', 'connecting', 'open', 'closed']);
    const reconnecting = c.events.find(([e]) => e === 'reconnecting')[1];
    assert.equal(reconnecting.code, 4001);
    assert.equal(reconnecting.reason, 'token expired');
    assert.equal(typeof reconnecting.delay, 'number');
    // Closed for good: nothing reconnects, ops are refused.
    const handshakes = server.handshakes.length;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(server.handshakes.length, handshakes);
    await assert.rejects(c.publish('r', 1), (e) => e instanceof FramegateError && e.code === 'closed');
  });
});

test('getToken is asked before every connect; its token goes in ?token=', async () => {
  await withServer({}, async (server, client) => {
    let n = 0;
    server.acceptToken = (t) => t !== 't2';  // the second token is refused (401)
    const c = client(server.url(), { getToken: async () => `t${++n}` });
    await c.connect();
    server.closeAll(4001, 'token expired');
    await until(() => c.events.filter(([e]) => e === 'open').length === 2, 'the reconnect');
    assert.deepEqual(server.handshakes.map((h) => h.token), ['t1', 't2', 't3']);
    assert.deepEqual(server.handshakes.map((h) => h.accepted), [true, false, true]);
    // A failing getToken is an error event and a retry, not a stop.
    let fail = true;
    const d = client(server.url(), { getToken: async () => { if (fail) { fail = false; throw new Error('no session'); } return 'fresh'; } });
    await d.connect();
    assert.ok(d.events.some(([e, x]) => e === 'error' && /no session/.test(x.message)));
    assert.equal(server.handshakes.at(-1).token, 'fresh');
    // A fixed token is used as given, an existing query kept.
    const e = client(`${server.url()}?x=1`, { token: 'a b' });
    await e.connect();
    assert.equal(server.handshakes.at(-1).token, 'a b');
  });
});

test('publish settles by id: answers out of order, an error rejects, a drop rejects as unknown', async () => {
  await withServer({}, async (server, client) => {
    const c = client(server.url());
    await c.connect();
    let held = null;
    server.onOp = (conn, op) => {
      if (op.op === 'publish' && op.data === 'a' && !held) { held = { conn, op }; return true; }
      return false;
    };
    const a = c.publish('r', 'a');
    const b = c.publish('r', 'b');
    assert.deepEqual(await b, { published: 'r', offset: 1, id: server.opsOf('publish')[1].id });
    held.conn.send({ published: 'r', offset: 99, id: held.op.id });
    assert.equal((await a).offset, 99);
    assert.notEqual(held.op.id, server.opsOf('publish')[1].id);

    await assert.rejects(c.publish('forbidden-room', 1), (e) => e instanceof FramegateError && e.code === 'server' &&
      /^forbidden: / .test(e.message));

    server.onOp = (conn, op) => op.op === 'publish';  // swallowed: never answered
    const lost = c.publish('r', 'c');
    await until(() => server.opsOf('publish').length === 4, 'the publish sent');
    server.terminateAll();
    await assert.rejects(lost, (e) => e.code === 'unknown');
  });
});

test('a gap in offsets is recovered with since: every message once, in order', async () => {
  await withServer({}, async (server, client) => {
    const c = client(server.url());
    await c.connect();
    const m = await member(c, 'r');
    assert.deepEqual(m.answer, { joined: 'r', epoch: 'e1', offset: 0, id: server.opsOf('join')[0].id });
    assert.equal(server.opsOf('join')[0].recover, true);
    server.publish('r', 1);
    server.publish('r', 2);
    const [conn] = server.conns;
    conn.hide = 2;  // 3 and 4 never reach this member
    for (const n of range(3, 6)) server.publish('r', n);
    await until(() => m.got.length === 6, 'six messages');
    assert.deepEqual(m.got, range(1, 6).map((n) => [n, n]));
    const since = server.opsOf('join').filter((j) => j.since);
    assert.deepEqual(since.map((j) => j.since), [{ epoch: 'e1', offset: 2 }]);
    assert.deepEqual(c.events.filter(([e]) => e === 'recovered').map(([, d]) => d), [{ room: 'r', epoch: 'e1', offset: 6 }]);
    // A repeat of what was delivered is dropped.
    conn.send({ room: 'r', data: 'again', offset: 4 });
    server.publish('r', 7);
    await until(() => m.got.length === 7, 'the seventh');
    assert.deepEqual(datas(m.got), range(1, 7));
    assert.deepEqual(c.position('r'), { epoch: 'e1', offset: 7 });
  });
});

test('after a drop or a 4001 the rooms are rejoined with since: nothing lost, nothing twice', async () => {
  await withServer({}, async (server, client) => {
    let n = 0;
    const c = client(server.url(), { getToken: () => `t${++n}` });
    await c.connect();
    const m = await member(c, 'r');
    for (const k of range(1, 3)) server.publish('r', k);
    await until(() => m.got.length === 3, 'three');
    server.refuse = 2;  // the first retries are refused
    server.terminateAll();
    for (const k of range(4, 6)) server.publish('r', k);  // while away
    await until(() => m.got.length === 6, 'six after the reconnect');
    server.closeAll(4001, 'token expired');
    for (const k of range(7, 9)) server.publish('r', k);
    await until(() => m.got.length === 9, 'nine after the 4001');
    server.publish('r', 10);
    await until(() => m.got.length === 10, 'ten');
    assert.deepEqual(m.got, range(1, 10).map((k) => [k, k]));
    const since = server.opsOf('join').filter((j) => j.since).map((j) => j.since.offset);
    assert.deepEqual(since, [3, 6]);
    assert.equal(c.events.filter(([e]) => e === 'unrecovered').length, 0);
    assert.ok(n >= 5, `getToken asked ${n} times`);
  });
});

test('a position the server cannot recover is surfaced as unrecovered, then the room goes on live', async () => {
  await withServer({ historySize: 3 }, async (server, client) => {
    const c = client(server.url());
    await c.connect();
    const m = await member(c, 'r');
    server.publish('r', 1);
    await until(() => m.got.length === 1, 'one');
    server.terminateAll();
    for (const k of range(2, 9)) server.publish('r', k);  // more than the 3 kept
    await until(() => c.events.some(([e]) => e === 'unrecovered'), 'unrecovered');
    const [, u] = c.events.find(([e]) => e === 'unrecovered');
    assert.equal(u.room, 'r');
    assert.match(u.reason, /no longer reaches back/);
    server.publish('r', 10);
    await until(() => m.got.length === 2, 'the live one');
    assert.deepEqual(m.got, [[1, 1], [10, 10]]);

    // The history lost: a new epoch, offsets from 1 again.
    server.terminateAll();
    server.newEpoch('r');
    await until(() => c.events.filter(([e]) => e === 'unrecovered').length === 2, 'the second unrecovered');
    assert.match(c.events.filter(([e]) => e === 'unrecovered')[1][1].reason, /new epoch/);
    server.publish('r', 'new');
    await until(() => m.got.length === 3, 'the first of the new epoch');
    assert.deepEqual(m.got[2], ['new', 1]);
    assert.deepEqual(c.position('r'), { epoch: 'e2', offset: 1 });
  });
});

test('without history, deliveries come as they are, and join answers say so', async () => {
  await withServer({ history: false }, async (server, client) => {
    const c = client(server.url());
    await c.connect();
    const m = await member(c, 'r');
    assert.equal(m.answer.history, false);
    server.publish('r', 'a');
    server.publish('r', 'a');
    await until(() => m.got.length === 2, 'both');
    assert.deepEqual(m.got, [['a', undefined], ['a', undefined]]);
    assert.deepEqual(await c.publish('r', 'b'), { published: 'r', id: server.opsOf('publish')[0].id });
    server.terminateAll();
    await until(() => c.events.filter(([e]) => e === 'open').length === 2, 'the reconnect');
    await until(() => server.opsOf('join').length === 2, 'the rejoin');
    assert.equal(server.opsOf('join')[1].since, undefined, 'no since without history');
    server.publish('r', 'c');
    await until(() => m.got.length === 4, 'live after the reconnect');
  });
});

test('a join whose answer never comes is asked again', async () => {
  await withServer({}, async (server, client) => {
    const c = client(server.url(), { answerTimeout: 100 });
    await c.connect();
    let swallowed = 0;
    server.onOp = (conn, op) => op.op === 'join' && swallowed++ === 0;
    const m = await member(c, 'r');
    assert.equal(m.answer.epoch, 'e1');
    assert.equal(server.opsOf('join').length, 2);
    assert.notEqual(server.opsOf('join')[0].id, server.opsOf('join')[1].id);
  });
});

test('presence answers the members; presence events reach who asked', async () => {
  await withServer({}, async (server, client) => {
    const a = client(server.url(), { token: 'alice' });
    const b = client(server.url(), { token: 'bob' });
    await a.connect();
    await b.connect();
    const events = [];
    await a.join('r', { presenceEvents: (e) => events.push(e) });
    assert.equal(server.opsOf('join')[0].presence_events, true);
    await b.join('r');
    await until(() => events.length === 1, 'bob joining');
    assert.deepEqual(events[0], { room: 'r', event: 'join', user: 'bob' });
    const members = await a.presence('r');
    assert.deepEqual(members.sort((x, y) => x.user.localeCompare(y.user)),
      [{ user: 'alice', connections: 1 }, { user: 'bob', connections: 1 }]);
    await b.leave('r');
    await until(() => events.length === 2, 'bob leaving');
    assert.equal(events[1].event, 'leave');
    assert.deepEqual(await b.presence('r'), [{ user: 'alice', connections: 1 }]);
    assert.ok(a.events.some(([e, d]) => e === 'presence' && d.user === 'bob'));
  });
});

test('joins, publishes and presence asked before the connection opens go out once it does', async () => {
  await withServer({}, async (server, client) => {
    server.refuse = 1;
    const c = client(server.url());
    const joined = member(c, 'r');
    const published = c.publish('r', 'early');
    c.connect();
    const m = await joined;
    assert.equal((await published).offset, 1);
    await until(() => m.got.length === 1, 'the early message');
    assert.deepEqual(m.got, [['early', 1]]);
    await assert.rejects(c.join('forbidden-x'), /forbidden/);
    assert.equal(c.position('forbidden-x'), null);
  });
});

test('reconnect() connects again at once with a fresh token, and rejoins with since', async () => {
  await withServer({}, async (server, client) => {
    let n = 0;
    const c = client(server.url(), { getToken: () => `t${++n}`, minReconnectDelay: 60000, maxReconnectDelay: 60000 });
    await c.connect();
    const m = await member(c, 'r');
    server.publish('r', 1);
    await until(() => m.got.length === 1, 'one');
    const presence = c.presence('r');
    c.reconnect();
    await until(() => c.state === 'open' && server.opsOf('join').length === 2, 'the rejoin');
    assert.deepEqual(server.opsOf('join')[1].since, { epoch: 'e1', offset: 1 });
    assert.deepEqual(server.handshakes.map((h) => h.token), ['t1', 't2']);
    assert.equal((await presence).length, 1, 'presence asked again on the new connection');
    // A wait of a minute before the next attempt is cut short too.
    server.terminateAll();
    await until(() => c.state === 'reconnecting', 'the drop');
    c.reconnect();
    await until(() => c.state === 'open', 'open again');
    assert.equal(server.handshakes.length, 3);
    server.publish('r', 2);
    await until(() => m.got.length === 2, 'two');
    assert.deepEqual(m.got, [[1, 1], [2, 2]]);
  });
});
