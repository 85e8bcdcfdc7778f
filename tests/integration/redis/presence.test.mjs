// Presence and op ids across two gateways (two "hosts") sharing one Redis,
// with users from tokens: who is in a room counts every host's
// connections per user, listeners hear joins and leaves, a publish with an
// id is answered with its offset, and a crashed worker's members drop out
// of presence within --presence-ttl.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, connect, nextMessage, whoami } from '../cluster/cluster.mjs';
import { RedisServer, until } from './redis_server.mjs';

const b64url = (b) => Buffer.from(b).toString('base64url');
function hs256(secret, sub) {
  const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const body = b64url(JSON.stringify({ sub, exp: Math.floor(Date.now() / 1000) + 600 }));
  return `${head}.${body}.${createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')}`;
}

// A /rooms client whose messages are sorted as they come: answers by id,
// presence events, deliveries.
async function client(host, secret, user) {
  const ws = await connect(host.url(`/rooms?token=${hs256(secret, user)}`));
  Object.assign(ws, { user, answers: new Map(), events: [], deliveries: [] });
  ws.removeAllListeners('message');  // sorted here instead of queued
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.id !== undefined) ws.answers.set(m.id, m);
    else if (m.presence_event) ws.events.push(`${m.presence_event} ${m.user}`);
    else if (m.data !== undefined) ws.deliveries.push(m);
  });
  let next = 0;
  ws.ask = async (op) => {
    const id = `${user}-${++next}`;
    ws.send(JSON.stringify({ ...op, id }));
    await until(() => ws.answers.has(id), `the answer to ${JSON.stringify(op)}`);
    return ws.answers.get(id);
  };
  return ws;
}

const present = (answer) => answer.members.map((m) => `${m.user}=${m.connections}`).join(',');

test('presence counts every host per user; listeners hear joins and leaves; a crashed worker drops out', async () => {
  const redis = await RedisServer.start();
  const dir = mkdtempSync(join(tmpdir(), 'fg-presence-'));
  const secret = randomBytes(32).toString('hex');
  writeFileSync(join(dir, 'secret'), secret, { mode: 0o600 });
  const hosts = [];
  try {
    for (let i = 0; i < 2; ++i)
      hosts.push(await Cluster.start({
        workers: 2,
        gatewayArgs: ['--jwt-secret-file', join(dir, 'secret'), '--sticky-key', 'user'],
        workerArgs: ['--enable-test-apps', '--redis', redis.url, '--presence-ttl', '1'],
      }));
    const [a, b] = hosts;
    const carol = await client(b, secret, 'carol');
    assert.deepEqual(await carol.ask({ op: 'join', room: 'R', presence_events: true }), { joined: 'R', id: 'carol-1' });
    const alice1 = await client(a, secret, 'alice');
    const alice2 = await client(a, secret, 'alice');
    const bob = await client(b, secret, 'bob');
    for (const ws of [alice1, alice2, bob]) assert.equal((await ws.ask({ op: 'join', room: 'R' })).joined, 'R');

    await until(() => ['join alice', 'join bob'].every((e) => carol.events.includes(e)), 'join events on the listener');
    assert.equal(carol.events.filter((e) => e === 'join alice').length, 2, carol.events.join('; '));
    assert.deepEqual(alice1.events, [], 'only listeners get events');
    assert.equal(present(await bob.ask({ op: 'presence', room: 'R' })), 'alice=2,bob=1,carol=1');

    // A publish with an id is answered once Redis numbered it.
    const { id, ...published } = await alice1.ask({ op: 'publish', room: 'R', data: 'hi' });
    assert.deepEqual(published, { published: 'R', offset: 1 }, `the answer to ${id}`);
    await until(() => [alice1, alice2, bob, carol].every((ws) => ws.deliveries.length === 1), 'the delivery');
    for (const ws of [alice1, alice2, bob, carol]) assert.deepEqual(ws.deliveries[0], { room: 'R', data: 'hi', offset: 1 });

    alice2.close();
    await until(() => carol.events.includes('leave alice'), 'the leave event');
    await until(async () => present(await carol.ask({ op: 'presence', room: 'R' })) === 'alice=1,bob=1,carol=1',
      'alice counted once');

    // bob's worker crashes: bob moves (counted by the new worker), and the
    // dead worker's share expires within --presence-ttl.
    const { worker } = await whoami(b, { path: `/whoami?token=${hs256(secret, 'bob')}` });
    await b.crashWorker(b.workers.findIndex((w) => w.name === worker));
    assert.equal((await bob.ask({ op: 'presence', room: 'R' })).presence, 'R', 'bob is served again');
    await until(async () => present(await carol.ask({ op: 'presence', room: 'R' })) === 'alice=1,bob=1,carol=1',
      'the crashed worker\'s share gone, bob counted once', 10000);
    for (const ws of [alice1, bob, carol]) ws.close();
  } finally {
    for (const h of hosts) await h.stop();
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without Redis, presence says it needs Redis; ids still get their answers', async () => {
  const c = await Cluster.start({ workers: 1 });
  try {
    const ws = await connect(c.url('/rooms'));
    ws.send(JSON.stringify({ op: 'presence', room: 'R', id: 1 }));
    assert.deepEqual(JSON.parse((await nextMessage(ws)).data),
      { error: 'presence: presence needs Redis (--redis)', id: 1 });
    ws.send(JSON.stringify({ op: 'join', room: 'R', id: 2 }));
    assert.deepEqual(JSON.parse((await nextMessage(ws)).data), { joined: 'R', id: 2 });
    ws.send(JSON.stringify({ op: 'publish', room: 'R', data: 5, id: 3 }));
    const got = [JSON.parse((await nextMessage(ws)).data), JSON.parse((await nextMessage(ws)).data)];
    assert.deepEqual(got.find((m) => m.id === 3), { published: 'R', id: 3 }, 'no offset without history');
    assert.deepEqual(got.find((m) => m.id === undefined), { room: 'R', data: 5 });
    ws.close();
  } finally {
    await c.stop();
  }
});
