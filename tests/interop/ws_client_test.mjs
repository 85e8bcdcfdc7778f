// Interoperability tests: the Node.js `ws` client (pinned in tests/package.json)
// against the real framegate-gateway in --echo mode.
//
// Run from tests/ (so that node resolves tests/node_modules):
//   cd tests && npm ci
//   FRAMEGATE_GATEWAY_BIN=../build/bin/framegate-gateway node --test interop/ws_client_test.mjs
//
// Each gateway is started on port 0; the real port is read from its stderr line
// `listening on HOST:PORT`. Gateways are stopped by PID with SIGTERM and must exit 0.
// Every wait is bounded so a hung gateway fails a test instead of hanging it.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import WebSocket from 'ws';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const GATEWAY_BIN =
  process.env.FRAMEGATE_GATEWAY_BIN || path.resolve(HERE, '..', '..', 'build', 'bin', 'framegate-gateway');

const MAX_MESSAGE = 1048576; // gateway's default --max-message-size
const SIZES = [0, 1, 125, 126, 65535, 65536, MAX_MESSAGE];
const STARTUP_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 10_000;
const WAIT_MS = 5_000; // any single wait for a frame/event
const WAIT_AFTER_TIMEOUT_MS = 2_000; // once a wait timed out, the gateway is suspect: fail faster
let anyTimeout = false;
const waitMs = () => (anyTimeout ? WAIT_AFTER_TIMEOUT_MS : WAIT_MS);
const TEST_TIMEOUT_MS = 20_000; // whole test

// ---------------------------------------------------------------------------
// Gateway process management
// ---------------------------------------------------------------------------

const gateways = new Set();

/** Start a gateway; resolves to { proc, port, url, stderr(), stop() }. */
function startGateway(extraArgs = []) {
  if (!existsSync(GATEWAY_BIN)) {
    throw new Error(`gateway binary not found: ${GATEWAY_BIN} (set FRAMEGATE_GATEWAY_BIN)`);
  }
  const args = ['--echo', '--listen', '127.0.0.1:0', '--threads', '2', ...extraArgs];
  const proc = spawn(GATEWAY_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited = null; // { code, signal }
  const exitPromise = new Promise((resolve) => {
    proc.on('exit', (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    });
  });
  const gw = {
    proc,
    port: 0,
    url: '',
    stderr: () => stderr,
    exitPromise,
    /** SIGTERM by PID, wait (bounded) for exit; SIGKILL if it hangs. Returns {code, signal}. */
    async stop() {
      gateways.delete(gw);
      if (exited) return exited;
      process.kill(proc.pid, 'SIGTERM');
      const res = await withTimeout(exitPromise, STOP_TIMEOUT_MS, 'gateway exit after SIGTERM').catch((e) => {
        try { process.kill(proc.pid, 'SIGKILL'); } catch { /* already gone */ }
        throw new Error(`${e.message}; stderr:\n${stderr}`);
      });
      return res;
    },
  };
  gateways.add(gw);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      try { process.kill(proc.pid, 'SIGKILL'); } catch { /* gone */ }
      gateways.delete(gw);
      reject(new Error(`gateway did not print "listening on" within ${STARTUP_TIMEOUT_MS} ms; stderr:\n${stderr}`));
    }, STARTUP_TIMEOUT_MS);
    proc.on('error', (err) => {
      clearTimeout(timer);
      gateways.delete(gw);
      reject(err);
    });
    proc.on('exit', (code, signal) => {
      if (!gw.port) {
        clearTimeout(timer);
        gateways.delete(gw);
        reject(new Error(`gateway exited early (code ${code}, signal ${signal}); stderr:\n${stderr}`));
      }
    });
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (!gw.port) {
        const m = /listening on [^ ]+:(\d+)/.exec(stderr);
        if (m) {
          gw.port = Number(m[1]);
          gw.url = `ws://127.0.0.1:${gw.port}/`;
          clearTimeout(timer);
          resolve(gw);
        }
      }
    });
  });
}

// If this process is ending anyway (e.g. an unexpected crash), do not leave gateways behind.
process.on('exit', () => {
  for (const gw of gateways) {
    try { process.kill(gw.proc.pid, 'SIGKILL'); } catch { /* gone */ }
  }
});

/** Last-resort cleanup (a test that failed mid-way). */
async function killAllGateways() {
  for (const gw of [...gateways]) {
    await gw.stop().catch(() => {});
  }
}

// ---------------------------------------------------------------------------
// Client helpers
// ---------------------------------------------------------------------------

function withTimeout(promise, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => {
      anyTimeout = true;
      reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
    }, ms);
  });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

const clients = new Set();

/**
 * Connected client with a message queue.
 * next() -> { data: Buffer, isBinary }, closed -> { code, reason, wasClean }.
 */
async function connect(url, protocols, options = {}) {
  const ws = new WebSocket(url, protocols, { maxPayload: 16 * MAX_MESSAGE, handshakeTimeout: WAIT_MS, ...options });
  clients.add(ws);
  const queue = [];
  const waiters = [];
  const errors = [];
  ws.on('message', (data, isBinary) => {
    const item = { data, isBinary };
    const w = waiters.shift();
    if (w) w.resolve(item);
    else queue.push(item);
  });
  ws.on('error', (err) => errors.push(err));
  const closed = new Promise((resolve) => {
    ws.addEventListener('close', (ev) => {
      clients.delete(ws);
      resolve({ code: ev.code, reason: ev.reason, wasClean: ev.wasClean });
      for (const w of waiters.splice(0)) w.reject(new Error(`connection closed (code ${ev.code}) while waiting for a message`));
    });
  });
  await withTimeout(
    new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    }),
    WAIT_MS,
    `WebSocket handshake with ${url}`,
  );
  return {
    ws,
    errors,
    closed,
    next(ms = waitMs()) {
      if (queue.length) return Promise.resolve(queue.shift());
      if (ws.readyState === WebSocket.CLOSED) return Promise.reject(new Error('connection already closed'));
      const p = new Promise((resolve, reject) => waiters.push({ resolve, reject }));
      return withTimeout(p, ms, 'an echoed message');
    },
    pending: () => queue.length,
    send(data, opts) {
      return new Promise((resolve, reject) => ws.send(data, opts, (err) => (err ? reject(err) : resolve())));
    },
    terminate() {
      ws.terminate();
    },
  };
}

/** Deterministic printable-ASCII text of exactly n bytes. */
function asciiText(n) {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?-_';
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[(i * 7 + (i >> 8)) % alphabet.length];
  return s;
}

/** Deterministic pseudo-random bytes (all 256 values occur) of length n. */
function binaryData(n, seed = 12345) {
  const buf = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    buf[i] = x & 0xff;
  }
  if (n >= 2) { buf[0] = 0x00; buf[n - 1] = 0xff; }
  return buf;
}

function assertSameBytes(actual, expected, what) {
  assert.ok(Buffer.isBuffer(actual), `${what}: expected a Buffer, got ${typeof actual}`);
  assert.equal(actual.length, expected.length, `${what}: length`);
  if (!actual.equals(expected)) {
    let i = 0;
    while (i < actual.length && actual[i] === expected[i]) i++;
    assert.fail(`${what}: first differing byte at offset ${i} (got ${actual[i]}, expected ${expected[i]})`);
  }
}

async function closeClient(c) {
  if (c.ws.readyState === WebSocket.OPEN) c.ws.close(1000);
  return withTimeout(c.closed, waitMs(), 'close handshake').catch(() => c.terminate());
}

/** The server closed `c` with 1009 (message too big) and echoed nothing of the oversize message. */
async function assertClosedAsTooBig(c) {
  const res = await withTimeout(c.closed, waitMs(), 'close after oversize message');
  assert.equal(res.code, 1009, `close code; client errors: ${c.errors.map((e) => e.message).join('; ')}`);
  assert.equal(c.pending(), 0, 'oversize message must not be echoed');
}

/**
 * Teardown of a describe block's gateway: drops its clients, and the gateway
 * must still exit 0 on SIGTERM, so a crash during the block fails it here.
 */
async function stopSharedGateway(gw) {
  for (const ws of [...clients]) ws.terminate();
  if (gw) {
    const res = await gw.stop();
    assert.deepEqual(res, { code: 0, signal: null }, `gateway exit status after SIGTERM; stderr:\n${gw.stderr()}`);
  }
  await killAllGateways();
}

// ---------------------------------------------------------------------------
// Tests against one shared echo gateway
// ---------------------------------------------------------------------------

describe('ws client <-> framegate-gateway --echo', () => {
  let gw;

  before(async () => {
    gw = await startGateway();
  });

  after(() => stopSharedGateway(gw));

  for (const size of SIZES) {
    test(`text message of ${size} bytes echoes byte-identical as text`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const c = await connect(gw.url);
      const text = asciiText(size);
      await c.send(text);
      const m = await c.next();
      assert.equal(m.isBinary, false, 'echo must be a text message');
      assertSameBytes(m.data, Buffer.from(text, 'utf8'), `text ${size}`);
      assert.equal(m.data.toString('utf8'), text);
      assert.equal(c.pending(), 0, 'exactly one echo expected');
      await closeClient(c);
    });

    test(`binary message of ${size} bytes echoes byte-identical as binary`, { timeout: TEST_TIMEOUT_MS }, async () => {
      const c = await connect(gw.url);
      const data = binaryData(size, size + 1);
      await c.send(data, { binary: true });
      const m = await c.next();
      assert.equal(m.isBinary, true, 'echo must be a binary message');
      assertSameBytes(m.data, data, `binary ${size}`);
      assert.equal(c.pending(), 0, 'exactly one echo expected');
      await closeClient(c);
    });
  }

  test('all sizes text and binary interleaved on one connection', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    const sent = [];
    for (const size of SIZES) {
      sent.push({ data: Buffer.from(asciiText(size)), isBinary: false });
      sent.push({ data: binaryData(size, 99 + size), isBinary: true });
    }
    for (const s of sent) c.ws.send(s.data, { binary: s.isBinary });
    for (const [i, s] of sent.entries()) {
      const m = await c.next();
      assert.equal(m.isBinary, s.isBinary, `message #${i} type`);
      assertSameBytes(m.data, s.data, `message #${i}`);
    }
    await closeClient(c);
  });

  test('multibyte UTF-8 text round-trips', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    const texts = [
      'héllo wörld — ünïcödé',
      '€ 日本語テキスト 한국어 العربية',
      '𝄞 🎉🚀 astral plane 😀👍🏽',
      '😀'.repeat(MAX_MESSAGE / 4), // exactly 1 MiB of 4-byte sequences
    ];
    for (const t of texts) {
      await c.send(t);
      const m = await c.next();
      assert.equal(m.isBinary, false);
      assertSameBytes(m.data, Buffer.from(t, 'utf8'), `utf8 text (${Buffer.byteLength(t)} bytes)`);
      assert.equal(m.data.toString('utf8'), t);
    }
    await closeClient(c);
  });

  test('fragmented text message (UTF-8 sequence split across fragments) echoes as one message', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    const full = Buffer.from('ab€cd😀ef', 'utf8');
    // Split inside the 3-byte '€' and inside the 4-byte '😀'.
    const cuts = [3, 9, full.length];
    let prev = 0;
    for (const [i, cut] of cuts.entries()) {
      await c.send(full.subarray(prev, cut), { binary: false, fin: i === cuts.length - 1 });
      prev = cut;
    }
    const m = await c.next();
    assert.equal(m.isBinary, false);
    assertSameBytes(m.data, full, 'reassembled fragmented text');
    // And nothing more than the one message arrives.
    await c.send('after');
    const m2 = await c.next();
    assert.equal(m2.data.toString(), 'after');
    await closeClient(c);
  });

  test('fragmented binary message echoes as one message', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    const full = binaryData(70000, 7);
    const cuts = [0, 1, 126, 65536, full.length];
    for (let i = 0; i + 1 < cuts.length; i++) {
      await c.send(full.subarray(cuts[i], cuts[i + 1]), { binary: true, fin: i + 2 === cuts.length });
    }
    const m = await c.next();
    assert.equal(m.isBinary, true);
    assertSameBytes(m.data, full, 'reassembled fragmented binary');
    await closeClient(c);
  });

  test('many messages sent back to back come back in order', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    const N = 2000;
    const sent = [];
    for (let i = 0; i < N; i++) {
      const isBinary = i % 3 === 0;
      const data = isBinary ? Buffer.concat([Buffer.from(`#${i}:`), binaryData(i % 300, i + 1)]) : Buffer.from(`message ${i} ${asciiText(i % 200)}`);
      sent.push({ data, isBinary });
      c.ws.send(data, { binary: isBinary }); // no awaiting: back to back
    }
    for (let i = 0; i < N; i++) {
      const m = await c.next();
      assert.equal(m.isBinary, sent[i].isBinary, `message ${i} type`);
      assertSameBytes(m.data, sent[i].data, `message ${i}`);
    }
    assert.equal(c.pending(), 0);
    await closeClient(c);
  });

  test('concurrent clients each get only their own echoes, in order', { timeout: TEST_TIMEOUT_MS }, async () => {
    const K = 8;
    const N = 200;
    const cs = await Promise.all(Array.from({ length: K }, () => connect(gw.url)));
    for (let k = 0; k < K; k++) for (let i = 0; i < N; i++) cs[k].ws.send(`client ${k} message ${i}`);
    await Promise.all(
      cs.map(async (c, k) => {
        for (let i = 0; i < N; i++) {
          const m = await c.next();
          assert.equal(m.isBinary, false);
          assert.equal(m.data.toString(), `client ${k} message ${i}`);
        }
      }),
    );
    await Promise.all(cs.map(closeClient));
  });

  test('ping with payload gets a pong with the same payload', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    const payloads = [Buffer.from('framegate-ping-1'), binaryData(125, 3), Buffer.alloc(0)];
    for (const p of payloads) {
      const pong = withTimeout(new Promise((resolve) => c.ws.once('pong', resolve)), waitMs(), 'pong');
      c.ws.ping(p);
      const got = await pong;
      assertSameBytes(got, p, `pong payload (${p.length} bytes)`);
    }
    // A ping between data messages does not disturb the data stream.
    c.ws.send('before');
    const pong = withTimeout(new Promise((resolve) => c.ws.once('pong', resolve)), waitMs(), 'pong');
    c.ws.ping(Buffer.from('mid'));
    c.ws.send('after');
    assertSameBytes(await pong, Buffer.from('mid'), 'pong payload between messages');
    assert.equal((await c.next()).data.toString(), 'before');
    assert.equal((await c.next()).data.toString(), 'after');
    await closeClient(c);
  });

  test('unsolicited pong is ignored (connection keeps echoing)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    c.ws.pong(Buffer.from('unsolicited'));
    await c.send('still here');
    const m = await c.next();
    assert.equal(m.data.toString(), 'still here');
    await closeClient(c);
  });

  test('client close 1000 with a reason: server answers close 1000, clean', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    await c.send('hello');
    assert.equal((await c.next()).data.toString(), 'hello');
    c.ws.close(1000, 'normal closure, bye');
    const res = await withTimeout(c.closed, waitMs(), 'close event');
    assert.equal(res.code, 1000, `close code (reason "${res.reason}")`);
    assert.equal(res.wasClean, true, 'close handshake must complete (server close frame received)');
    assert.deepEqual(c.errors, []);
  });

  test('client close with application code 4321: server answers with the same code', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    c.ws.close(4321, 'app-defined');
    const res = await withTimeout(c.closed, waitMs(), 'close event');
    assert.equal(res.code, 4321);
    assert.equal(res.wasClean, true);
  });

  test('message of max size + 1 (1048577 bytes) gets closed with 1009', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    c.ws.send(binaryData(MAX_MESSAGE + 1, 5), { binary: true });
    await assertClosedAsTooBig(c);
  });

  test('text message of max size + 1 gets closed with 1009', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    c.ws.send(asciiText(MAX_MESSAGE + 1));
    await assertClosedAsTooBig(c);
  });

  test('gateway still serves new connections after the oversize close', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    await c.send('alive');
    assert.equal((await c.next()).data.toString(), 'alive');
    await closeClient(c);
  });
});

// ---------------------------------------------------------------------------
// permessage-deflate (RFC 7692): the ws client with perMessageDeflate on
// ---------------------------------------------------------------------------

/** Compressible JSON-like text of exactly n bytes. */
function jsonText(n) {
  let s = '';
  for (let i = 0; s.length < n; i++) s += `{"id":${i},"user":"u${i % 13}","text":"hello there","ts":${1700000000 + i}},`;
  return s.slice(0, n);
}

// `params`: what the ws client accepted from the gateway's response (ws
// offers `permessage-deflate; client_max_window_bits`).
const DEFLATE_CONFIGS = [
  { name: 'no context takeover (default)', args: [], params: { server_no_context_takeover: true, client_no_context_takeover: true } },
  { name: 'context takeover both ways', args: ['--deflate-takeover', 'both'], params: { client_max_window_bits: 15 } },
  {
    name: 'context takeover, windows capped at 2^10',
    args: ['--deflate-takeover', 'both', '--deflate-window-bits', '10'],
    params: { server_max_window_bits: 10, client_max_window_bits: 10 },
  },
];

for (const config of DEFLATE_CONFIGS) {
  describe(`permessage-deflate, ${config.name}: ws client with perMessageDeflate`, () => {
    let gw;
    // threshold 0 on both sides: every message travels compressed.
    const deflate = { perMessageDeflate: { threshold: 0 } };

    before(async () => {
      gw = await startGateway(['--deflate', '--deflate-threshold', '0', ...config.args]);
    });

    after(() => stopSharedGateway(gw));

    test('the extension is negotiated', { timeout: TEST_TIMEOUT_MS }, async () => {
      const c = await connect(gw.url, undefined, deflate);
      assert.equal(c.ws.extensions, 'permessage-deflate');
      // ws keeps the negotiated parameters on its extension object (ws 8 internals, pinned).
      assert.deepEqual({ ...c.ws._extensions['permessage-deflate'].params }, config.params);
      await closeClient(c);
    });

    for (const size of SIZES) {
      test(`text and binary of ${size} bytes echo byte-identical`, { timeout: TEST_TIMEOUT_MS }, async () => {
        const c = await connect(gw.url, undefined, deflate);
        const text = jsonText(size);
        const data = binaryData(size, size + 3);
        await c.send(text);
        await c.send(data, { binary: true });
        const t = await c.next();
        assert.equal(t.isBinary, false);
        assertSameBytes(t.data, Buffer.from(text), `text ${size}`);
        const b = await c.next();
        assert.equal(b.isBinary, true);
        assertSameBytes(b.data, data, `binary ${size}`);
        await closeClient(c);
      });
    }

    test('many similar messages in a row keep both contexts in step', { timeout: TEST_TIMEOUT_MS }, async () => {
      const c = await connect(gw.url, undefined, deflate);
      const sent = Array.from({ length: 300 }, (_, i) => jsonText(200 + (i % 17) * 61));
      for (const m of sent) c.ws.send(m);
      for (const [i, m] of sent.entries()) assert.equal((await c.next()).data.toString(), m, `message ${i}`);
      await closeClient(c);
    });

    test('compressed on the wire both ways', { timeout: TEST_TIMEOUT_MS }, async () => {
      const c = await connect(gw.url, undefined, deflate);
      const text = jsonText(256 * 1024);
      const [readBefore, writtenBefore] = [c.ws._socket.bytesRead, c.ws._socket.bytesWritten];
      await c.send(text);
      assertSameBytes((await c.next()).data, Buffer.from(text), 'echo');
      const read = c.ws._socket.bytesRead - readBefore;
      const written = c.ws._socket.bytesWritten - writtenBefore;
      assert.ok(written < text.length / 4, `client sent ${written} bytes for ${text.length}`);
      assert.ok(read < text.length / 4, `server sent ${read} bytes for ${text.length}`);
      await closeClient(c);
    });

    test('a message inflating past --max-message-size is closed with 1009', { timeout: TEST_TIMEOUT_MS }, async () => {
      const c = await connect(gw.url, undefined, deflate);
      c.ws.send(asciiText(MAX_MESSAGE + 1));
      await assertClosedAsTooBig(c);
    });

    test('a client with perMessageDeflate off still gets plain echoes', { timeout: TEST_TIMEOUT_MS }, async () => {
      const c = await connect(gw.url, undefined, { perMessageDeflate: false });
      assert.equal(c.ws.extensions, '');
      await c.send(jsonText(5000));
      assert.equal((await c.next()).data.toString(), jsonText(5000));
      await closeClient(c);
    });
  });
}

// ---------------------------------------------------------------------------
// Subprotocol negotiation
// ---------------------------------------------------------------------------

describe('subprotocol negotiation (--subprotocol chat,superchat)', () => {
  let gw;

  before(async () => {
    gw = await startGateway(['--subprotocol', 'chat,superchat']);
  });

  after(() => stopSharedGateway(gw));

  test("offering ['superchat'] selects superchat", { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url, ['superchat']);
    assert.equal(c.ws.protocol, 'superchat');
    await c.send('proto');
    assert.equal((await c.next()).data.toString(), 'proto');
    await closeClient(c);
  });

  test("offering ['chat'] selects chat", { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url, ['chat']);
    assert.equal(c.ws.protocol, 'chat');
    await closeClient(c);
  });

  test("offering ['unknown', 'superchat'] selects superchat", { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url, ['unknown', 'superchat']);
    assert.equal(c.ws.protocol, 'superchat');
    await closeClient(c);
  });

  test('offering no subprotocol: none selected, still echoes', { timeout: TEST_TIMEOUT_MS }, async () => {
    const c = await connect(gw.url);
    assert.equal(c.ws.protocol, '');
    await c.send('no proto');
    assert.equal((await c.next()).data.toString(), 'no proto');
    await closeClient(c);
  });
});

// ---------------------------------------------------------------------------
// Shutdown
// ---------------------------------------------------------------------------

describe('SIGTERM shutdown', () => {
  after(async () => {
    for (const ws of [...clients]) ws.terminate();
    await killAllGateways();
  });

  test('SIGTERM closes connected clients with 1001 and the gateway exits 0', { timeout: TEST_TIMEOUT_MS }, async () => {
    const gw = await startGateway();
    const c = await connect(gw.url);
    await c.send('x');
    assert.equal((await c.next()).data.toString(), 'x');
    const res = await gw.stop();
    const closed = await withTimeout(c.closed, waitMs(), 'close after gateway SIGTERM');
    assert.equal(closed.code, 1001, 'close code sent on shutdown');
    assert.deepEqual(res, { code: 0, signal: null }, `gateway exit status; stderr:\n${gw.stderr()}`);
  });
});
