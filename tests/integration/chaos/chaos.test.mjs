// Chaos: two gateways × two workers sharing a real redis-server, 200 clients
// on /echo and /rooms, and during the run every fault of issue #12 at once:
// a worker killed (-9) and restarted, another stopped past the link timeout
// and resumed, Redis restarted, oversized, invalid, foreign and forged
// messages published into the room's channel, a client flooding pings and
// one that never reads (the cluster shares a --redis-secret-file, so forged
// messages are refused; without one they could inject, see docs). Afterwards every well-behaved client is still open,
// every echo came back (replays allowed), and room traffic is whole again.
// Bounded: about a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, connect, joinRoom, sleep } from '../cluster/cluster.mjs';
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
    workerArgs: ['--redis', redis.url, '--redis-buffer', '100000', '--redis-secret-file', secret.file],
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
  const redis = await RedisServer.start();
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
        Object.assign(ws, { got: new Map(), dups: 0, reorders: 0, closedEarly: false });
        ws.on('message', (d) => {
          const m = JSON.parse(d.toString());
          if (m.room !== ROOM || typeof m.data?.p !== 'number') return;
          const seen = ws.got.get(m.data.p) ?? [];
          if (seen.includes(m.data.n)) ws.dups++;
          else if (seen.length && seen[seen.length - 1] > m.data.n) ws.reorders++;
          seen.push(m.data.n);
          ws.got.set(m.data.p, seen);
        });
        ws.closed.then(({ code, reason }) => { if (!ws.done) ws.closedEarly = `${code} ${reason}`; });
        joinRoom(ws, ROOM);
        members.push(ws);
      }
    }
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

    // Rooms whole again: after the faults every member gets both publishers'
    // last messages, each once and in order.
    await until(() => members.every((m) => publishers.every((_, i) => (m.got.get(i) ?? []).includes(published[i]))),
      'the last publishes on every member', 20000);
    let missing = 0;
    for (const m of members) {
      assert.equal(m.closedEarly, false, `a room member was closed: ${m.closedEarly}`);
      assert.equal(m.dups, 0, 'a member received a publish twice');
      assert.equal(m.reorders, 0, 'a member received one publisher\'s messages out of order');
      assert.equal(m.got.has(9), false, 'a forged message was delivered');
      for (const [i, total] of published.entries()) missing += total - (m.got.get(i) ?? []).length;
    }
    console.log(`# ${echoers.length} echo clients, ${echoers[0].sent} messages each; ${members.length} members, ` +
      `${published[0] + published[1]} publishes, ${missing} member deliveries missed across the faults`);

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
    await redis.kill();
    rmSync(secret.dir, { recursive: true, force: true });
  }
});
