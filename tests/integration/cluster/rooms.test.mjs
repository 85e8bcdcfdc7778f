// Rooms across the workers of one gateway: exactly-once delivery to every
// member, publisher included; leave stops delivery; other rooms hear nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, connect, joinRoom, nextMessage, placeMembers, silentFor } from './cluster.mjs';

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
