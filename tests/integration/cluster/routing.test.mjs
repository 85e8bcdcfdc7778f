// Gateway + real workers: echo through workers, message order, 404/503,
// sticky keys. Every cluster runs on free loopback ports and is stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, connect, nextMessage, whoami } from './cluster.mjs';

const testApps = ['--enable-test-apps'];

test('echo through workers: text and binary of many sizes come back unchanged', async () => {
  const c = await Cluster.start({ workers: 2, threads: 2, workerArgs: testApps });
  try {
    const ws = await connect(c.url('/echo'));
    for (const size of [0, 1, 125, 126, 65535, 65536, 1 << 20]) {
      const text = 'x'.repeat(size);
      ws.send(text);
      const m = await nextMessage(ws);
      assert.equal(m.isBinary, false);
      assert.equal(m.data.length, size);
      assert.equal(m.data, text);
      const bin = Buffer.alloc(size, 0xa5);
      ws.send(bin);
      const b = await nextMessage(ws);
      assert.equal(b.isBinary, true);
      assert.ok(Buffer.compare(b.data, bin) === 0, `binary of ${size} bytes differs`);
    }
    ws.close(1000);
    assert.equal((await ws.closed).code, 1000);
  } finally {
    assert.equal((await c.stop()).code, 0);
  }
});

test('per-connection order is preserved through workers', async () => {
  const c = await Cluster.start({ workers: 3, threads: 2 });
  try {
    const clients = await Promise.all(Array.from({ length: 20 }, () => connect(c.url('/echo'))));
    const n = 500;
    for (const ws of clients) for (let i = 0; i < n; ++i) ws.send(`m${i}`);
    for (const ws of clients) {
      for (let i = 0; i < n; ++i) assert.equal((await nextMessage(ws)).data, `m${i}`);
    }
    for (const ws of clients) ws.close();
  } finally {
    await c.stop();
  }
});

test('a path no worker serves gets 404; no worker at all gets 503', async () => {
  const c = await Cluster.start({ workers: 1 });
  try {
    await assert.rejects(connect(c.url('/nope')), /handshake refused: 404/);
    await c.crashWorker(0);
    // The gateway notices the link closing at once; allow it a moment.
    await c.gateway.waitFor(/link to worker 'w1' closed/);
    await assert.rejects(connect(c.url('/echo')), /handshake refused: 503/);
  } finally {
    await c.stop();
  }
});

for (const [mode, place] of [
  ['header:x-user', (key) => ({ headers: { 'x-user': key } })],
  ['query:user', (key) => ({ path: `/whoami?user=${key}` })],
  ['cookie:sid', (key) => ({ headers: { cookie: `theme=dark; sid=${key}` } })],
]) {
  test(`sticky key ${mode}: repeat connections land on the same worker, keys spread`, async () => {
    const c = await Cluster.start({ workers: 3, threads: 2, gatewayArgs: ['--sticky-key', mode], workerArgs: testApps });
    try {
      const seen = new Set();
      for (let k = 0; k < 12; ++k) {
        const key = `user-${k}`;
        const first = await whoami(c, place(key));
        assert.equal(first.sticky_key, key);
        for (let again = 0; again < 3; ++again) assert.equal((await whoami(c, place(key))).worker, first.worker);
        seen.add(first.worker);
      }
      assert.ok(seen.size >= 2, `12 keys all went to ${[...seen]}`);
    } finally {
      await c.stop();
    }
  });
}

test('sticky key conn (default) spreads connections over every worker', async () => {
  const c = await Cluster.start({ workers: 3, workerArgs: testApps });
  try {
    const counts = {};
    for (let i = 0; i < 60; ++i) {
      const w = (await whoami(c)).worker;
      counts[w] = (counts[w] ?? 0) + 1;
    }
    assert.equal(Object.keys(counts).length, 3, JSON.stringify(counts));
    for (const n of Object.values(counts)) assert.ok(n >= 8, JSON.stringify(counts));
  } finally {
    await c.stop();
  }
});

test('a message too big for the worker closes its connection with 1009 and leaves the worker link up', async () => {
  // The gateway takes 200 kB messages; the worker's links carry 64 KiB envelopes.
  const c = await Cluster.start({ workers: 2, gatewayArgs: ['--max-message-size', '200000'],
    workerArgs: ['--max-envelope', '65536'] });
  try {
    await c.gateway.waitFor(/worker 'w\d' takes messages up to \d+ bytes .* below --max-message-size 200000/);
    const bystanders = await Promise.all(Array.from({ length: 6 }, () => connect(c.url('/echo'))));
    const big = await connect(c.url('/echo'));
    big.send('x'.repeat(65000));  // fits in an envelope: still delivered
    assert.equal((await nextMessage(big)).data.length, 65000);
    big.send('x'.repeat(100000));
    const closed = await big.closed;
    assert.equal(closed.code, 1009);
    assert.match(closed.reason, /too big for the worker/);
    // Sending it would have closed the link (and the failover's replay the next one).
    for (const ws of bystanders) {
      ws.send('still here');
      assert.equal((await nextMessage(ws)).data, 'still here');
    }
    assert.ok(!c.gateway.lines.some((l) => /link to worker .* closed/.test(l)), c.gateway.lines.join('\n'));
    for (const ws of bystanders) ws.close();
  } finally {
    await c.stop();
  }
});
