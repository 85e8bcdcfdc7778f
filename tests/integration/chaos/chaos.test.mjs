// Chaos: two gateways × two workers sharing a real redis-server, 200 clients
// on /echo and /rooms, and during the run every fault of issue #12 at once:
// a worker killed (-9) and restarted, another stopped past the link timeout
// and resumed, Redis restarted, oversized, invalid, foreign and forged
// messages published into the room's channel, a client flooding pings and
// one that never reads (the cluster shares a --redis-secret-file, so forged
// messages are refused; without one they could inject, see docs).
// Afterwards every well-behaved client is still open, every echo came back
// (replays allowed), and every room member has every message, each once
// and in order: members recover what a fault cost them from the room's
// history, as the client library does (a gap in offsets asks "since").
// Redis keeps its data across the restart (append-only file), so nothing
// may be lost for good. Bounded: about a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, connect, sleep } from '../cluster/cluster.mjs';
import { RedisServer, until } from '../redis/redis_server.mjs';

const ROOM = 'chaos';
const CHANNEL = `framegate:room:${ROOM}`;

// The cluster's shared secret: with it, only its members can publish into rooms.
function secretFile() {
  const dir = mkdtempSync(join(tmpdir(), 'fg-chaos-'));
  const file = join(dir, 'redis-secret');
  writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return { dir, file };
}

async function startHost(redis, secret) {
  return Cluster.start({
    workers: 2,
    gatewayArgs: ['--sticky-key', 'header:x-user', '--link-ping', '0.25', '--link-timeout', '1',
      '--max-send-queue', '262144'],
    workerArgs: ['--redis', redis.url, '--redis-buffer', '100000', '--redis-secret-file', secret.file,
      '--history-size', '10000'],
  });
}

// A member of ROOM that numbers what it gets and recovers what it missed:
// a gap in the offsets asks again with "since" (the worker then sends the
// missing messages, its answer, and live ones from above its top).
function roomMember(ws) {
  Object.assign(ws, { epoch: null, last: 0, pending: false, answers: 0, got: new Map(), dups: 0,
    notRecovered: [], recoveries: 0 });
  ws.ask = (position) => {
    ws.pending = true;
    ws.send(JSON.stringify(position ? { op: 'join', room: ROOM, since: { epoch: ws.epoch, offset: ws.last } }
      : { op: 'join', room: ROOM, recover: true }));
  };
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.joined === ROOM) {
      ws.answers++;
      ws.pending = false;
      if (m.recovered === true) ws.recoveries++;
      if (m.recovered === false) ws.notRecovered.push(m.reason);
      if (m.epoch === undefined) return;  // history unavailable: asked again at the next gap, or at the end
      if (m.epoch !== ws.epoch) [ws.epoch, ws.last] = [m.epoch, m.offset];
      else ws.last = Math.max(ws.last, m.offset);
      return;
    }
    if (m.room !== ROOM || typeof m.data?.p !== 'number') return;
    assert.equal(typeof m.offset, 'number', 'a room delivery without its offset');
    const key = `${m.data.p}:${m.data.n}`;
    const before = ws.got.get(key);
    if (before !== undefined && before !== m.offset) ws.dups++;  // one publish under two offsets
    ws.got.set(key, m.offset);
    if (m.offset === ws.last + 1) ws.last = m.offset;
    else if (m.offset > ws.last + 1 && !ws.pending) ws.ask(true);
  });
}

// A raw client that completes the handshake and then never reads a byte.
function rawClient(port, path) {
  return new Promise((resolve, reject) => {
    const s = netConnect(port, '127.0.0.1', () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      s.pause();  // never read: the gateway's queue for us fills
      resolve(s);
    });
    s.on('error', () => {});
    s.once('error', reject);
  });
}

// PUBLISH of arbitrary bytes over RESP (too big for a redis-cli argument).
function publishRaw(port, channel, payload) {
  const body = Buffer.from(payload);
  const head = `*3\r\n$7\r\nPUBLISH\r\n$${Buffer.byteLength(channel)}\r\n${channel}\r\n$${body.length}\r\n`;
  return new Promise((resolve, reject) => {
    const s = netConnect(port, '127.0.0.1', () => s.end(Buffer.concat([Buffer.from(head), body, Buffer.from('\r\n')])));
    let reply = '';
    s.on('data', (d) => { reply += d.toString(); });
    s.on('close', () => (reply.startsWith(':') ? resolve(Number(reply.slice(1))) : reject(new Error(reply))));
    s.on('error', reject);
  });
}

// A masked frame (mask 0: the payload goes as it is).
function frame(opcode, payload) {
  const body = Buffer.from(payload);
  return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | body.length, 0, 0, 0, 0]), body]);
}

test('every fault at once: no well-behaved client closed, every echo back, rooms whole again', async () => {
  const redis = await RedisServer.start({ persistent: true });
  const secret = secretFile();
  const hosts = [];
  const stopped = [];
  const timers = [];
  const hostile = [];
  try {
    hosts.push(await startHost(redis, secret), await startHost(redis, secret));

    // 100 echo clients and 50 room members per host.
    const echoers = [];
    const members = [];
    for (const [h, c] of hosts.entries()) {
      for (let i = 0; i < 50; ++i) {
        const ws = await connect(c.url('/echo'), { headers: { 'x-user': `e${h}-${i}` } });
        Object.assign(ws, { sent: 0, got: new Set(), closedEarly: false });
        ws.on('message', (d) => ws.got.add(Number(d.toString())));
        ws.closed.then(({ code, reason }) => { if (!ws.done) ws.closedEarly = `${code} ${reason}`; });
        echoers.push(ws);
      }
      for (let i = 0; i < 50; ++i) {
        const ws = await connect(c.url('/rooms'), { headers: { 'x-user': `m${h}-${i}` } });
        Object.assign(ws, { closedEarly: false });
        roomMember(ws);
        ws.closed.then(({ code, reason }) => { if (!ws.done) ws.closedEarly = `${code} ${reason}`; });
        ws.ask(false);
        members.push(ws);
      }
    }
    await until(() => members.every((m) => m.answers === 1), 'every member joined with its position');
    await until(() => (redis.numsub(CHANNEL)[CHANNEL] ?? 0) === 4, 'every worker subscribed to the room');
    const publishers = [members[0], members[50]];
    const published = [0, 0];

    timers.push(setInterval(() => {
      for (const ws of echoers) if (ws.readyState === ws.OPEN) ws.send(String(ws.sent++));
      publishers.forEach((p, i) => {
        if (p.readyState === p.OPEN)
          p.send(JSON.stringify({ op: 'publish', room: ROOM, data: { p: i, n: ++published[i] } }));
      });
    }, 50));

    await sleep(1500);
    // A worker dies and comes back.
    await hosts[0].crashWorker(0);
    await sleep(700);
    await hosts[0].restartWorker(0);
    // Another stops past the link timeout, then resumes.
    const paused = hosts[1].workers[1];
    process.kill(paused.pid, 'SIGSTOP');
    stopped.push(paused);
    await sleep(2500);
    process.kill(paused.pid, 'SIGCONT');
    stopped.pop();
    // Hostile input in the room's channel, from any Redis client.
    await publishRaw(redis.port, CHANNEL, Buffer.alloc(2 * 1024 * 1024, 'x'));
    await publishRaw(redis.port, CHANNEL, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    await publishRaw(redis.port, CHANNEL, 'foreign: not from a framegate worker');
    await publishRaw(redis.port, CHANNEL, `fg1 0123456789abcdef ffffffffffffffff\n{"room":"${ROOM}","data":{"p":9,"n":1}}`);
    // A client that floods pings and never reads, and one that never reads its echoes.
    const flooder = await rawClient(hosts[0].port, '/echo');
    hostile.push(flooder);
    const ping = frame(0x9, 'flood');
    for (let i = 0; i < 20000; ++i) flooder.write(ping);
    const deaf = await rawClient(hosts[1].port, '/echo');
    hostile.push(deaf);
    for (let i = 0; i < 2000; ++i) deaf.write(frame(0x1, 'x'.repeat(100)));
    await sleep(500);
    // Redis restarts.
    await redis.kill('SIGKILL');
    await sleep(700);
    await redis.restart();
    await sleep(3000);
    for (const t of timers) clearInterval(t);

    // Every echo back: replays may duplicate, nothing is lost.
    const complete = (ws) => ws.got.size === ws.sent;
    try {
      await until(() => echoers.every(complete), 'every echo back', 20000);
    } catch (e) {
      const short = echoers.filter((ws) => !complete(ws));
      throw new Error(`${e.message}: ${short.length} clients short (${short.filter((ws) => ws.closedEarly).length} ` +
        `closed: ${[...new Set(short.map((ws) => ws.closedEarly))].join('; ')}), e.g. ${short.slice(0, 3).map((ws) => `${ws.got.size}/${ws.sent}`).join(', ')}`);
    }
    for (const ws of echoers) {
      assert.equal(ws.closedEarly, false, `an echo client was closed: ${ws.closedEarly}`);
      for (let n = 0; n < ws.sent; ++n) assert.ok(ws.got.has(n), `echo ${n} of ${ws.sent} missing`);
    }

    // Every member has every message: the last ones arrive live, then one
    // more "since" picks up whatever a fault cost it that no later gap showed.
    const has = (m, i, n) => m.got.has(`${i}:${n}`);
    await until(() => members.every((m) => publishers.every((_, i) => has(m, i, published[i]))),
      'the last publishes on every member', 20000);
    const liveOnly = members.reduce((sum, m) => sum + m.got.size, 0);
    for (const m of members) m.answersBefore = m.answers;
    for (const m of members) m.ask(true);
    await until(() => members.every((m) => m.answers > m.answersBefore), 'the final recovery answers', 20000);
    let missing = 0;
    for (const m of members) {
      assert.equal(m.closedEarly, false, `a room member was closed: ${m.closedEarly}`);
      assert.equal(m.dups, 0, 'a member received one publish under two offsets');
      assert.equal(m.got.has('9:1'), false, 'a forged message was delivered');
      for (const [i, total] of published.entries())
        for (let n = 1; n <= total; ++n) if (!has(m, i, n)) ++missing;
      // In offset order, each publisher's messages are in the order sent.
      const byOffset = [...m.got.entries()].sort((a, b) => a[1] - b[1]).map(([k]) => k.split(':').map(Number));
      for (const i of [0, 1]) {
        const ns = byOffset.filter(([p]) => p === i).map(([, n]) => n);
        assert.deepEqual(ns, [...ns].sort((a, b) => a - b), `publisher ${i}'s messages out of order`);
      }
    }
    const recovered = members.reduce((sum, m) => sum + m.got.size, 0) - liveOnly;
    const recoveries = members.reduce((sum, m) => sum + m.recoveries, 0);
    const refused = members.flatMap((m) => m.notRecovered);
    console.log(`# ${echoers.length} echo clients, ${echoers[0].sent} messages each; ${members.length} members, ` +
      `${published[0] + published[1]} publishes; ${recoveries} recoveries (${refused.length} not recovered: ` +
      `${[...new Set(refused)].join('; ')}), ${recovered} deliveries recovered by the final one, ${missing} missing`);
    // delivered + dropped + missed = published, with nothing dropped or missed for good.
    assert.equal(missing, 0, `${missing} member deliveries lost for good`);

    // The hostile clients were dealt with, and every process is still up.
    for (const c of hosts) {
      assert.equal(c.gateway.proc.exitCode, null, 'a gateway died');
      for (const w of c.workers) assert.equal(w.proc.exitCode, null, `worker ${w.name} died`);
    }
    for (const ws of [...echoers, ...members]) { ws.done = true; ws.close(); }
  } finally {
    for (const t of timers) clearInterval(t);
    for (const w of stopped) process.kill(w.pid, 'SIGCONT');
    for (const s of hostile) s.destroy();
    for (const c of hosts) await c.stop();
    await redis.dispose();
    rmSync(secret.dir, { recursive: true, force: true });
  }
});
