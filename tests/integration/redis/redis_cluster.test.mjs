// Rooms through a real Redis Cluster (3 primaries + 3 replicas, sharded
// pub/sub, --redis-cluster): two framegate clusters share it, rooms spread
// over every shard; a primary killed under load fails over; a slot with an
// active room migrates. Each time: no member gets a message twice, each
// publisher's messages arrive in order, and every loss is counted (the
// publisher is told, or the member's worker counts the offsets it missed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, joinRoom, placeMembers, sleep } from '../cluster/cluster.mjs';
import { RedisCluster } from './redis_cluster.mjs';
import { until } from './redis_server.mjs';

const channel = (room) => `framegate:{room:${room}}`;

async function startHosts(redis, count, extra = []) {
  const opts = {
    workers: 2,
    gatewayArgs: ['--sticky-key', 'header:x-user'],
    workerArgs: ['--enable-test-apps', '--redis-cluster', redis.seeds, '--admin', '127.0.0.1:0', ...extra],
  };
  const hosts = [];
  try {
    for (let i = 0; i < count; ++i) hosts.push(await Cluster.start(opts));
  } catch (e) {
    for (const h of hosts) await h.stop();
    throw e;
  }
  return hosts;
}

// A worker's counter or gauge from its /metrics (summed over labels).
async function metric(worker, name) {
  const m = worker.lines.map((l) => l.match(/admin listening on [^ ]+:(\d+)/)).find(Boolean);
  if (!m) throw new Error(`${worker.name} logged no admin address`);
  const text = await (await fetch(`http://127.0.0.1:${m[1]}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(name + ' ') || line.startsWith(name + '{')) sum += Number(line.split(' ').pop());
  return sum;
}

const workersOf = (hosts) => hosts.flatMap((h) => h.workers);

// Members record what they receive; publishes carry ids and their answers
// are kept ({ id -> offset | error }).
function record(member) {
  member.got = [];
  member.answers = new Map();
  member.on('message', (d) => {
    const msg = JSON.parse(d.toString());
    if (msg.id !== undefined) member.answers.set(msg.id, msg.error ?? msg.offset);
    else if (msg.room !== undefined && msg.data !== undefined) member.got.push(msg);
  });
}

// Every member: no (room, publisher, n) twice, and each publisher's numbers
// in increasing order per room.
function assertOnceInOrder(members) {
  for (const m of members) {
    const seen = new Set();
    const last = new Map();
    for (const { room, data } of m.got) {
      const key = `${room}/${data.from}/${data.n}`;
      assert.ok(!seen.has(key), `${m.worker} received ${key} twice`);
      seen.add(key);
      const prev = last.get(`${room}/${data.from}`) ?? 0;
      assert.ok(data.n > prev, `${m.worker}: ${key} after ${prev} (order)`);
      last.set(`${room}/${data.from}`, data.n);
    }
  }
}

async function stopAll(hosts, redis) {
  for (const h of hosts) await h.stop();
  await redis.dispose();
}

test('two framegate clusters share a Redis Cluster: rooms on every shard, each message once, in order', async () => {
  const redis = await RedisCluster.start();
  let hosts = [];
  try {
    hosts = await startHosts(redis, 2);
    // Rooms whose slots cover all three primaries.
    const rooms = [];
    const owners = new Set();
    for (let i = 0; rooms.length < 9 || owners.size < 3; ++i) {
      const room = `r${i}`;
      owners.add(redis.primaryForSlot(redis.slotOf(channel(room))));
      rooms.push(room);
    }
    assert.equal(owners.size, 3);
    const members = [...await placeMembers(hosts[0], 1, 'a'), ...await placeMembers(hosts[1], 1, 'b')];
    for (const m of members) {
      record(m);
      for (const room of rooms) joinRoom(m, room);
    }
    // Every worker (4) subscribes to every room, on the room's primary.
    await until(() => rooms.every((r) => redis.shardNumsub(channel(r)) === 4), 'sharded subscriptions', 15000);

    const perRoom = 20;
    for (let n = 1; n <= perRoom; ++n)
      for (const [i, m] of members.entries())
        for (const room of rooms)
          m.send(JSON.stringify({ op: 'publish', room, data: { from: i, n }, id: `${room}/${n}` }));
    const total = perRoom * members.length * rooms.length;
    await until(() => members.every((m) => m.got.length >= total), 'every message on every member', 20000)
      .catch((e) => {
        for (const m of members) console.log(m.worker, m.got.length, 'of', total, [...m.answers.values()].filter((a) => typeof a !== 'number').slice(0, 3));
        for (const w of workersOf(hosts)) console.log(w.name, w.lines.slice(-8).join('\n'));
        throw e;
      });
    await sleep(300);
    assertOnceInOrder(members);
    for (const m of members) {
      assert.equal(m.got.length, total, `${m.worker}: ${m.got.length} deliveries`);
      // Redis numbered each room's messages 1..N, the same for everyone.
      for (const room of rooms) {
        const offsets = m.got.filter((g) => g.room === room).map((g) => g.offset);
        assert.deepEqual(offsets, offsets.map((_, k) => k + 1), `${m.worker}: offsets of ${room}`);
      }
      assert.equal(m.answers.size, perRoom * rooms.length, `${m.worker}: one answer per publish`);
      for (const [id, answer] of m.answers) assert.equal(typeof answer, 'number', `${id}: ${answer}`);
    }
    for (const w of workersOf(hosts)) {
      assert.equal(await metric(w, 'framegate_worker_redis_cluster_shards'), 3, w.name);
      assert.equal(await metric(w, 'framegate_worker_broker_up'), 1, w.name);
      assert.equal(await metric(w, 'framegate_worker_broker_gap_messages_total'), 0, w.name);
    }
    for (const m of members) m.close();
  } finally {
    await stopAll(hosts, redis);
  }
});

// A stream of publishes (every 10 ms) into `room` while `disturb` runs;
// returns the members, their deliveries and the publisher's answers.
async function streamThrough(redis, hosts, room, disturb) {
  const members = [...await placeMembers(hosts[0], 1, 'a'), ...await placeMembers(hosts[1], 1, 'b')];
  for (const m of members) {
    record(m);
    joinRoom(m, room);
  }
  await until(() => redis.shardNumsub(channel(room)) === 4, 'sharded subscriptions', 15000);
  const publisher = members[0];
  let n = 0;
  const timer = setInterval(() => {
    ++n;
    publisher.send(JSON.stringify({ op: 'publish', room, data: { from: 0, n }, id: n }));
  }, 10);
  await sleep(500);
  await disturb();
  // Delivery resumes: a publish made well after the disturbance reaches everyone.
  const mark = n + 50;
  await until(() => members.every((m) => m.got.some((g) => g.data.n >= mark)), 'delivery to resume', 20000);
  clearInterval(timer);
  const sent = n;
  await until(() => publisher.answers.size === sent, 'an answer to every publish', 15000);
  await sleep(500);
  return { members, publisher, sent };
}

// Every publish was answered once; what a member lacks was either refused
// to the publisher (an error answer, counted as dropped) or numbered and
// then counted by the member's worker as a gap.
async function assertLossesCounted(hosts, { members, publisher, sent }) {
  assertOnceInOrder(members);
  const failed = [...publisher.answers].filter(([, a]) => typeof a !== 'number').map(([id]) => id);
  const missedByWorker = new Map();
  let missing = 0;
  for (const m of members) {
    const got = new Set(m.got.map((g) => g.data.n));
    for (let k = 1; k <= sent; ++k) {
      if (got.has(k)) continue;
      ++missing;
      if (failed.includes(k)) continue;
      const set = missedByWorker.get(m.worker) ?? new Set();
      set.add(k);
      missedByWorker.set(m.worker, set);
    }
  }
  const dropped = (await Promise.all(workersOf(hosts).map((w) => metric(w, 'framegate_worker_broker_dropped_total'))))
    .reduce((a, b) => a + b, 0);
  assert.ok(dropped >= failed.length, `${failed.length} publishes refused, ${dropped} counted as dropped`);
  for (const [worker, numbers] of missedByWorker) {
    const [tag, name] = worker.split('/');
    const w = hosts[tag === 'a' ? 0 : 1].workers.find((x) => x.name === name);
    const gaps = await metric(w, 'framegate_worker_broker_gap_messages_total');
    assert.ok(gaps >= numbers.size, `${worker} missed ${numbers.size} numbered messages, counted ${gaps} gaps`);
  }
  return { failed: failed.length, missing };
}

test('a primary carrying a room is killed under load: the replica takes over, delivery resumes, losses counted',
  async () => {
    const redis = await RedisCluster.start();
    let hosts = [];
    try {
      hosts = await startHosts(redis, 2);
      const room = 'failover';
      const primary = redis.primaryForSlot(redis.slotOf(channel(room)));
      const run = await streamThrough(redis, hosts, room, async () => {
        await redis.killNode(primary);
        await redis.waitForFailover(primary);
      });
      const { failed, missing } = await assertLossesCounted(hosts, run);
      assert.notEqual(redis.primaryForSlot(redis.slotOf(channel(room))), primary);
      const moved = await Promise.all(workersOf(hosts).map((w) => metric(w, 'framegate_worker_redis_cluster_rooms_moved_total')));
      assert.ok(moved.every((n) => n >= 1), `every worker moved the room: ${moved}`);
      console.log(`failover: ${run.sent} publishes, ${failed} refused, ${missing} member deliveries missing`);
    } finally {
      await stopAll(hosts, redis);
    }
  });

// CRC16/XMODEM mod 16384 of the hash tag: the slot of a sharded channel,
// computed here so a room can be picked for the slots a reshard moves.
function slotOfChannel(ch) {
  const open = ch.indexOf('{');
  const close = open < 0 ? -1 : ch.indexOf('}', open + 1);
  const key = close > open + 1 ? ch.slice(open + 1, close) : ch;
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let k = 0; k < 8; ++k) crc = (crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1) & 0xffff;
  }
  return crc % 16384;
}

for (const how of ['moved by hand (SETSLOT, MIGRATE)', 'moved with redis-cli --cluster reshard'])
test(`the slot of an active room migrates to another primary, ${how}: no duplicates, losses counted`, async () => {
  const redis = await RedisCluster.start();
  let hosts = [];
  try {
    hosts = await startHosts(redis, 2);
    const primaries = redis.nodes.filter((n) => n.role === 'primary').map((n) => n.port);
    const from = primaries[0];
    const to = primaries[1];
    // redis-cli moves the source's lowest slots first: a room among its first 64.
    const [first] = redis.slotsOf(from).sort((a, b) => a[0] - b[0])[0];
    let room = 'migrating';
    for (let i = 0; !(slotOfChannel(channel(room)) >= first && slotOfChannel(channel(room)) < first + 64); ++i)
      room = `migrating-${i}`;
    const slot = redis.slotOf(channel(room));
    assert.equal(slot, slotOfChannel(channel(room)));
    const run = await streamThrough(redis, hosts, room, async () => {
      if (how.includes('reshard')) assert.ok((await redis.reshard(from, to, 64)).includes(slot));
      else await redis.moveSlot(slot, to);
    });
    const { failed, missing } = await assertLossesCounted(hosts, run);
    assert.equal(redis.primaryForSlot(slot), to);
    assert.equal(redis.shardNumsub(channel(room)), 4, 'every worker subscribed at the new owner');
    console.log(`migration (${how}): ${run.sent} publishes, ${failed} refused, ${missing} member deliveries missing`);
  } finally {
    await stopAll(hosts, redis);
  }
});
