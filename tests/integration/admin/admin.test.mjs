// The gateway's admin listener: health, readiness and the publish API,
// against the real gateway and real workers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { joinRoom, nextMessage, placeMembers, silentFor, sleep } from '../cluster/cluster.mjs';
import { startWithAdmin, request, publish } from './admin.mjs';
import { RedisServer } from '../redis/redis_server.mjs';

// Two /rooms members in room R, one on each worker of cluster `c`, joined
// and announced to the broker.
async function membersOnTwoWorkers(c, room) {
  const members = await placeMembers(c, 1);
  assert.equal(members.length, 2, 'members on both workers');
  for (const m of members) joinRoom(m, room);
  await sleep(300);  // joins travel to the broker
  return members;
}

const clusterArgs = { workers: 2, gatewayArgs: ['--sticky-key', 'header:x-user'], workerArgs: ['--enable-test-apps'] };

test('healthz answers ok; readyz is 503 without a worker and 200 with one', async () => {
  const c = await startWithAdmin({ workers: 0 });
  try {
    const health = await request(c, { path: '/healthz' });
    assert.equal(health.status, 200);
    assert.equal(health.body.trim(), 'ok');

    const notReady = await request(c, { path: '/readyz' });
    assert.equal(notReady.status, 503);
    assert.match(notReady.body, /^not ready: .+\n$/);

    c.workers.push(c.startWorker('w1'));
    await c.waitForRegistrations(1);
    const ready = await request(c, { path: '/readyz' });
    assert.equal(ready.status, 200, ready.body);

    assert.equal((await request(c, { path: '/nowhere' })).status, 404);
    assert.equal((await request(c, { method: 'POST', path: '/healthz', body: '' })).status, 405);
    assert.equal((await request(c, { method: 'GET', path: '/api/publish' })).status, 405);
  } finally {
    await c.stop();
  }
});

test('readyz is 200 in echo mode', async () => {
  const c = await startWithAdmin({ workers: 0, gatewayArgs: ['--echo'] });
  try {
    assert.equal((await request(c, { path: '/readyz' })).status, 200);
  } finally {
    await c.stop();
  }
});

test('a publish reaches members on two workers exactly once, data byte for byte', async () => {
  const c = await startWithAdmin(clusterArgs);
  try {
    const members = await membersOnTwoWorkers(c, 'R');
    const data = '{"a": [1, 2.50]}';
    const res = await publish(c, `{"room":"R","data":${data}}`);
    assert.equal(res.status, 200, res.body);
    // Without Redis there is no history: taken, not numbered.
    assert.deepEqual(JSON.parse(res.body), { published: 1, offsets: [null] });
    assert.match(res.headers['content-type'], /^application\/json/);
    for (const m of members) assert.equal((await nextMessage(m)).data, `{"room":"R","data":${data}}`);
    for (const m of members) assert.ok(await silentFor(m, 300), `duplicate delivery on ${m.worker}`);
    for (const m of members) m.close();
  } finally {
    await c.stop();
  }
});

test('with Redis history the answer carries the offset of each message, in the order sent', async () => {
  const redis = await RedisServer.start();
  const c = await startWithAdmin({ ...clusterArgs, workerArgs: ['--enable-test-apps', '--redis', redis.url] });
  try {
    const members = await membersOnTwoWorkers(c, 'H');
    const first = await publish(c, '{"room":"H","data":1}');
    assert.equal(first.status, 200, first.body);
    assert.deepEqual(JSON.parse(first.body), { published: 1, offsets: [1] });
    const batch = await publish(c, '{"messages":[{"room":"H","data":2},{"room":"other","data":0},{"room":"H","data":3}]}');
    assert.deepEqual(JSON.parse(batch.body), { published: 3, offsets: [2, 1, 3] });
    for (const m of members)
      for (const n of [1, 2, 3]) assert.equal((await nextMessage(m)).data, `{"room":"H","data":${n},"offset":${n}}`);
    for (const m of members) m.close();
  } finally {
    await c.stop();
    await redis.kill();
  }
});

test('a batch is delivered in order', async () => {
  const c = await startWithAdmin(clusterArgs);
  try {
    const members = await membersOnTwoWorkers(c, 'B');
    const values = ['1', '"two"', '{"three": 3.0}', '[4]', 'null'];
    const body = `{"messages":[${values.map((v) => `{"room":"B","data":${v}}`).join(', ')}]}`;
    const res = await publish(c, body);
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(JSON.parse(res.body), { published: values.length, offsets: values.map(() => null) });
    for (const m of members)
      for (const v of values) assert.equal((await nextMessage(m)).data, `{"room":"B","data":${v}}`);
    for (const m of members) assert.ok(await silentFor(m, 300), 'more deliveries than messages');
    for (const m of members) m.close();
  } finally {
    await c.stop();
  }
});

test('bad requests get 400 with a one-line JSON error, and nothing is published', async () => {
  const c = await startWithAdmin(clusterArgs);
  try {
    const [member] = await membersOnTwoWorkers(c, 'R');
    const bad = [
      '{"room":"R","data":',                                  // bad JSON
      '{"data":1}',                                           // missing room
      '{"room":5,"data":1}',                                  // non-string room
      '{"room":"","data":1}',                                 // empty room
      `{"room":"${'x'.repeat(257)}","data":1}`,               // room too long
      '{"room":"R"}',                                         // missing data
      '{"messages":{"room":"R","data":1}}',                   // messages not an array
      '{"messages":[{"room":"R","data":1},{"data":2}]}',      // one bad message rejects the batch
      '[1]',                                                  // not an object
    ];
    for (const body of bad) {
      const res = await publish(c, body);
      assert.equal(res.status, 400, `${body} -> ${res.status} ${res.body}`);
      assert.match(res.body, /^\{"error":"[^\n]+"\}\n$/);
    }
    assert.ok(await silentFor(member, 300), 'a rejected request published something');
    member.close();
  } finally {
    await c.stop();
  }
});

test('a missing or wrong token gets 401 with WWW-Authenticate: Bearer', async () => {
  const c = await startWithAdmin({ workers: 1 });
  try {
    for (const auth of [null, 'Bearer wrong', 'Bearer secretX', 'Basic c2VjcmV0', 'Bearer ']) {
      const res = await publish(c, '{"room":"R","data":1}', { auth });
      assert.equal(res.status, 401, `${auth} -> ${res.status}`);
      assert.match(res.headers['www-authenticate'], /^Bearer/);
    }
    assert.equal((await publish(c, '{"room":"R","data":1}')).status, 200);
  } finally {
    await c.stop();
  }
});

test('a body over --max-message-size gets 413', async () => {
  const c = await startWithAdmin({ workers: 1, gatewayArgs: ['--max-message-size', '1024'] });
  try {
    const big = `{"room":"R","data":"${'x'.repeat(2000)}"}`;
    const res = await publish(c, big);
    assert.equal(res.status, 413, res.body);
    // Without Content-Length (chunked), the parser's body limit answers.
    const chunked = await publish(c, Buffer.from(big), { headers: { 'transfer-encoding': 'chunked' } });
    assert.equal(chunked.status, 413, chunked.body);
    const fits = await publish(c, `{"room":"R","data":"${'x'.repeat(900)}"}`);
    assert.equal(fits.status, 200, fits.body);
  } finally {
    await c.stop();
  }
});

test('without --api-token the publish API answers 403', async () => {
  const c = await startWithAdmin({ workers: 1, withToken: false });
  try {
    const res = await publish(c, '{"room":"R","data":1}');
    assert.equal(res.status, 403);
    assert.match(res.body, /publish API disabled: set --api-token/);
  } finally {
    await c.stop();
  }
});

test('publish answers 503 when no worker is connected', async () => {
  const c = await startWithAdmin({ workers: 0 });
  try {
    const res = await publish(c, '{"room":"R","data":1}');
    assert.equal(res.status, 503, res.body);
  } finally {
    await c.stop();
  }
});
