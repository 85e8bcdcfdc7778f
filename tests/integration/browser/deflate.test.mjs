// permessage-deflate with headless Chromium, which always offers
// `permessage-deflate; client_max_window_bits` and compresses what it sends:
// a page served by the gateway opens a WebSocket to it, sends text and
// binary messages of many sizes and kinds, and checks every echo. The
// gateway's counters at exit (its "permessage-deflate:" line) prove the
// messages crossed the wire compressed both ways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster } from '../cluster/cluster.mjs';
import { Chromium, chromiumMissing } from './chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const demoDir = process.env.FRAMEGATE_DEMO_DIR ?? join(here, '..', '..', '..', 'deploy', 'demo');

// Runs in the page: echoes every case through one WebSocket and reports.
async function pageEcho({ url }) {
  const sizes = [0, 1, 125, 126, 1000, 4096, 65535, 65536, 300000, 900000];  // characters: the text stays under 1 MiB of UTF-8
  const json = (n) => {
    let s = '';
    for (let i = 0; s.length < n; i++) s += `{"id":${i},"user":"u${i % 13}","text":"héllo ✓","ts":${1700000000 + i}},`;
    return s.slice(0, n).replace(/[\uD800-\uDBFF]$/, 'x');
  };
  const random = (n) => crypto.getRandomValues(new Uint8Array(n > 65536 ? 65536 : n));
  const cases = [];
  for (const n of sizes) {
    cases.push(json(n));
    const bytes = new Uint8Array(n);
    for (let i = 0; i < n; i += 65536) bytes.set(random(Math.min(65536, n - i)), i);
    cases.push(n % 2 ? bytes : new Uint8Array(n).fill(7));
  }
  const ws = new WebSocket(url);
  ws.binaryType = 'arraybuffer';
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error('WebSocket error')); });
  const echoes = [];
  const done = new Promise((resolve, reject) => {
    ws.onmessage = (e) => { echoes.push(e.data); if (echoes.length === cases.length) resolve(); };
    ws.onclose = (e) => reject(new Error(`closed ${e.code} ${e.reason} after ${echoes.length} echoes`));
  });
  for (const c of cases) ws.send(c);
  await done;
  const problems = [];
  cases.forEach((c, i) => {
    const got = echoes[i];
    if (typeof c === 'string') {
      if (got !== c) problems.push(`text case ${i} (${c.length} chars) differs`);
    } else {
      const g = new Uint8Array(got);
      if (g.length !== c.length || g.some((b, j) => b !== c[j])) problems.push(`binary case ${i} (${c.length} bytes) differs`);
    }
  });
  const extensions = ws.extensions;
  ws.onclose = null;
  ws.close(1000);
  return { extensions, problems, count: cases.length };
}

function deflateCounters(lines) {
  const line = lines.find((l) => l.includes('permessage-deflate:'));
  assert.ok(line, `no permessage-deflate line at exit:\n${lines.slice(-5).join('\n')}`);
  const m = line.match(/(\d+) connections, (\d+) messages inflated \((\d+) -> (\d+) bytes\), (\d+) compressed \((\d+) -> (\d+) bytes\)/);
  const [connections, inflated, inWire, inPlain, compressed, outPlain, outWire] = m.slice(1).map(Number);
  return { connections, inflated, inWire, inPlain, compressed, outPlain, outWire };
}

const configs = [
  { name: 'echo mode, no context takeover', workers: 0, args: ['--echo'], path: '/',
    extensions: 'permessage-deflate; server_no_context_takeover; client_no_context_takeover' },
  { name: 'through a worker, no context takeover', workers: 1, args: [], path: '/echo',
    extensions: 'permessage-deflate; server_no_context_takeover; client_no_context_takeover' },
  { name: 'echo mode, context takeover with 2^10 windows', workers: 0, path: '/',
    args: ['--echo', '--deflate-takeover', 'both', '--deflate-window-bits', '10'],
    extensions: 'permessage-deflate; server_max_window_bits=10; client_max_window_bits=10' },
];

for (const config of configs) {
  test(`Chromium negotiates permessage-deflate and every echo matches: ${config.name}`,
    { skip: chromiumMissing, timeout: 120000 }, async () => {
      let cluster, browser;
      try {
        cluster = await Cluster.start({
          workers: config.workers,
          gatewayArgs: ['--deflate', '--deflate-threshold', '64', '--static-dir', demoDir, '--admin', 'off', ...config.args],
        });
        browser = await Chromium.start();
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${cluster.port}/`);
        const result = await page.evaluate(pageEcho, { url: `ws://127.0.0.1:${cluster.port}${config.path}` });
        assert.deepEqual(result.problems, []);
        assert.equal(result.extensions, config.extensions);
        await browser.stop();
        browser = null;
        await cluster.stop();
        const c = deflateCounters(cluster.gateway.lines);
        assert.ok(c.connections >= 1, JSON.stringify(c));
        // Chromium compressed what it sent, the gateway what it echoed (not the small or random ones).
        assert.ok(c.inflated >= result.count / 2, `inflated ${c.inflated} of ${result.count}: ${JSON.stringify(c)}`);
        assert.ok(c.compressed >= 10, `compressed ${c.compressed}: ${JSON.stringify(c)}`);
        assert.ok(c.outWire * 2 < c.outPlain, `echoes not smaller on the wire: ${JSON.stringify(c)}`);
        cluster = null;
      } finally {
        if (browser) await browser.stop();
        if (cluster) await cluster.stop();
      }
    });
}
