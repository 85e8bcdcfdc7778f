// Rooms across the workers of one gateway: exactly-once delivery to every
// member, publisher included; leave stops delivery; other rooms hear nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Cluster, connect, joinRoom, nextMessage, placeMembers, silentFor, sleep } from './cluster.mjs';

test('a publish reaches every member on every worker exactly once', async () => {
  const c = await Cluster.start({ workers: 3, threads: 2, gatewayArgs: ['--sticky-key', 'header:x-user'], workerArgs: ['--enable-test-apps'] });
  try {
    const members = await placeMembers(c, 2);
    for (const m of members) joinRoom(m, 'R');
    const outsider = await connect(c.url('/rooms'));
    joinRoom(outsider, 'S');
    await new Promise((r) => setTimeout(r, 300));  // joins travel to the hub

    const data = '{"text":"hi \\u00e9", "n":[1, 2.50]}';
    members[0].send(`{"op":"publish","room":"R","data":${data}}`);
    for (const m of members) {
      const got = await nextMessage(m);
      assert.equal(got.data, `{"room":"R","data":${data}}`);
    }
    for (const m of members) assert.ok(await silentFor(m, 300), `duplicate delivery on ${m.worker}`);
    assert.ok(await silentFor(outsider, 0), 'a member of S received a message for R');

    // leave stops delivery
    members[1].send(JSON.stringify({ op: 'leave', room: 'R' }));
    await new Promise((r) => setTimeout(r, 300));
    members[0].send('{"op":"publish","room":"R","data":2}');
    for (const m of members.filter((_, i) => i !== 1)) assert.equal((await nextMessage(m)).data, '{"room":"R","data":2}');
    assert.ok(await silentFor(members[1], 300), 'a member that left still receives');

    // errors are answered, not fatal
    members[0].send('not json');
    assert.match((await nextMessage(members[0])).data, /^\{"error":/);
    members[0].send('{"op":"dance"}');
    assert.match((await nextMessage(members[0])).data, /^\{"error":/);
    members[0].send('{"op":"publish","room":"R","data":3}');
    assert.equal((await nextMessage(members[0])).data, '{"room":"R","data":3}');
    for (const m of [...members, outsider]) m.close();
  } finally {
    await c.stop();
  }
});

// Peak resident memory of a process (VmHWM), in KiB.
const peakRssKiB = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)[1]);

test('1 MiB of "[" gets its error without building a document (issue #12)', async () => {
  const c = await Cluster.start({ workers: 1 });
  try {
    const ws = await connect(c.url('/rooms'));
    ws.send('{"op":"join","room":"warm"}');  // the worker's buffers at their usual size first
    await sleep(200);
    const before = peakRssKiB(c.workers[0].pid);
    ws.send('['.repeat(1024 * 1024));
    const reply = JSON.parse((await nextMessage(ws, 15000)).data);
    const grownKiB = peakRssKiB(c.workers[0].pid) - before;
    // The message itself passes through a few buffers; a DOM of it was ~76 MB.
    assert.ok(grownKiB < 16 * 1024, `the worker's peak RSS grew by ${grownKiB} KiB`);
    assert.equal(reply.error, 'invalid JSON: nested more than 512 levels deep');
    ws.close();
  } finally {
    await c.stop();
  }
});

test('memberships kept as deltas survive a worker crash (issue #12)', async () => {
  const c = await Cluster.start({ workers: 2, gatewayArgs: ['--sticky-key', 'header:x-user'], workerArgs: ['--enable-test-apps'] });
  try {
    const members = await placeMembers(c, 1);
    const member = members.find((m) => m.worker === 'w1');
    const publisher = members.find((m) => m.worker === 'w2');
    for (const room of ['a', 'b', 'c', 'd']) joinRoom(member, room);
    member.send(JSON.stringify({ op: 'leave', room: 'b' }));
    for (let i = 0; i < 100; ++i) member.send(JSON.stringify({ op: i % 2 ? 'leave' : 'join', room: 't' }));
    member.send(JSON.stringify({ op: 'leave', room: 'd' }));
    // Every message handled (and so its state kept) before the crash: a
    // publish to a room the member is in comes back to it last.
    member.send('{"op":"publish","room":"a","data":"sync"}');
    assert.equal((await nextMessage(member)).data, '{"room":"a","data":"sync"}');

    await c.crashWorker(0);
    await c.gateway.waitFor(/worker 'w1' lost: moved (\d+) connection/);
    await sleep(300);  // the resumed member's joins travel to the hub
    for (const room of ['a', 'b', 'c', 'd', 't']) publisher.send(JSON.stringify({ op: 'publish', room, data: room }));
    const got = [(await nextMessage(member)).data, (await nextMessage(member)).data].sort();
    assert.deepEqual(got, ['{"room":"a","data":"a"}', '{"room":"c","data":"c"}']);
    assert.ok(await silentFor(member, 300), 'the member got a message for a room it had left');
    for (const m of members) m.close();
  } finally {
    await c.stop();
  }
});
