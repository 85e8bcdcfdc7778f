// The demo and its client library through faults, in headless Chromium:
// two gateways × two workers sharing one persistent Redis with history,
// gateways that require tokens. Page A (Alice, gateway 1) and page B (Bob,
// gateway 2) log in with HS256 tokens and join one room; both pages and the
// HTTP publish API publish while A's worker is killed (-9) and restarted
// and B's gateway is restarted on the same port. Afterwards both pages
// show the same list: offsets 1..N with no gap, no message twice, in
// order, every confirmed publish in it at its offset. Bounded (about a
// minute); every process is stopped by PID.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster, connect, nextMessage, sleep } from '../cluster/cluster.mjs';
import { RedisServer, until } from '../redis/redis_server.mjs';
import { hs256Secret } from '../client/tokens.mjs';
import { Chromium, chromiumMissing } from './chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const demoDir = process.env.FRAMEGATE_DEMO_DIR ?? join(here, '..', '..', '..', 'deploy', 'demo');
const ROOM = 'recovery';
const API_TOKEN = 'api-secret-for-the-recovery-test';
const PER_SOURCE = 40;

async function startHost(redis, secretFile) {
  const c = await Cluster.start({
    workers: 2,
    gatewayArgs: ['--static-dir', demoDir, '--admin', '127.0.0.1:0', '--api-token', API_TOKEN,
      '--jwt-secret-file', secretFile, '--sticky-key', 'user'],
    workerArgs: ['--redis', redis.url, '--history-size', '10000', '--enable-test-apps'],
  });
  c.adminPort = Number((await c.gateway.waitFor(/admin listening on [^ ]+:(\d+)/))[1]);
  return c;
}

// The index in host.workers of the worker that serves `token`'s user.
async function workerOf(host, token) {
  const ws = await connect(`${host.url('/whoami')}?token=${token}`);
  ws.send('who');
  const { worker } = JSON.parse((await nextMessage(ws)).data);
  ws.close();
  return host.workers.findIndex((w) => w.name === worker);
}

// The demo page on host, logged in with token, joined to ROOM.
async function openPage(browser, host, name, token) {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${host.port}/?name=${name}&room=${ROOM}&token=${token}`);
  await page.locator('#state[data-state="open"]').waitFor({ timeout: 10000 });
  await page.click('#join');
  await page.waitForFunction((room) => !!window.framegateDemo.client.position(room)?.epoch, ROOM, { timeout: 10000 });
  await page.evaluate(() => {
    Object.assign(window, { opens: 0, unrecovered: [] });
    window.framegateDemo.client.on('open', () => { window.opens += 1; });
    window.framegateDemo.client.on('unrecovered', (u) => window.unrecovered.push(u.reason));
  });
  return page;
}

// Publishes through the page's library: { ok, offset } or { ok: false, code, message }.
const pagePublish = (page, from, text) => page.evaluate(async ({ room, from, text }) => {
  try {
    const answer = await window.framegateDemo.client.publish(room, { from, text });
    return { ok: true, offset: answer.offset };
  } catch (e) {
    return { ok: false, code: e.code, message: e.message };
  }
}, { room: ROOM, from, text });

// Publishes through the HTTP API of host.
async function apiPublish(host, from, text) {
  try {
    const res = await fetch(`http://127.0.0.1:${host.adminPort}/api/publish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ room: ROOM, data: { from, text } }),
    });
    const body = await res.text();
    // 502: its worker went away before confirming it (it may or may not
    // have been published); 503: no worker, or busy.
    if (res.status !== 200) return { ok: false, code: res.status, message: body };
    // A 200 confirms: it carries the offset Redis gave the message (a 200
    // without one would be a defect, and fails the test below).
    const offset = JSON.parse(body).offsets?.[0];
    return typeof offset === 'number' ? { ok: true, offset } : { ok: false, code: 'no offset', message: body };
  } catch (e) {
    return { ok: false, code: 'fetch', message: e.message };
  }
}

// What the page shows: [{ offset, from, text }] of the room's messages, in page order.
const shown = (page) => page.$$eval('#messages li[data-offset]', (lis) => lis.map((li) => ({
  offset: Number(li.dataset.offset), from: li.querySelector('.from').textContent, text: li.querySelector('.text').textContent,
})));

test('two pages on two gateways keep the whole room through a worker crash and a gateway restart',
  { skip: chromiumMissing, timeout: 150000 }, async (t) => {
    const tmp = mkdtempSync(join(tmpdir(), 'fg-browser-recovery-'));
    let redis, browser, ok = false;
    const hosts = [];
    try {
      redis = await RedisServer.start({ persistent: true });
      const secret = hs256Secret(tmp);
      hosts.push(await startHost(redis, secret.file), await startHost(redis, secret.file));
      const tokens = { Alice: secret.sign({ sub: 'alice' }), Bob: secret.sign({ sub: 'bob' }) };
      const aWorker = await workerOf(hosts[0], tokens.Alice);
      assert.ok(aWorker >= 0, 'alice\'s worker not found');

      browser = await Chromium.start();
      const a = await openPage(browser, hosts[0], 'Alice', tokens.Alice);
      const b = await openPage(browser, hosts[1], 'Bob', tokens.Bob);

      const sources = [
        ['Alice', (text) => pagePublish(a, 'Alice', text)],
        ['Bob', (text) => pagePublish(b, 'Bob', text)],
        ['api', (text) => apiPublish(hosts[0], 'api', text)],
      ];
      const confirmed = new Map();  // text -> offset
      const failed = [];
      const inflight = [];
      const faults = [];
      for (let n = 1; n <= PER_SOURCE; ++n) {
        for (const [from, send] of sources) {
          const text = `${from}-${n}`;
          inflight.push(send(text).then((r) => (r.ok ? confirmed.set(text, r.offset) : failed.push({ text, ...r }))));
        }
        if (n === 10) faults.push((async () => {
          await hosts[0].crashWorker(aWorker);
          await sleep(300);
          await hosts[0].restartWorker(aWorker);
        })());
        if (n === 20) faults.push(hosts[1].restartGateway());
        await sleep(40);
      }
      await Promise.all(faults);
      await Promise.all(inflight);
      // The faults happened as planned: B's page connected again.
      await until(() => b.evaluate(() => window.opens >= 1), 'page B reconnected after its gateway restart', 20000);

      // One last message through the API, once every other publish settled:
      // its offset is the room's top.
      const last = await apiPublish(hosts[0], 'api', 'last');
      assert.ok(last.ok, `the last API publish was not confirmed: ${JSON.stringify(last)}`);
      const lastShown = (page) => page.locator('#messages li[data-offset]', { hasText: /^api\s*last/ });
      for (const page of [a, b]) await lastShown(page).waitFor({ timeout: 30000 });
      const top = Number(await lastShown(a).getAttribute('data-offset'));
      assert.equal(Number(await lastShown(b).getAttribute('data-offset')), top, 'the pages see the last message at different offsets');
      assert.equal(last.offset, top, 'the API confirmed the last message at another offset');

      const lists = [await shown(a), await shown(b)];
      for (const [i, list] of lists.entries()) {
        const page = i === 0 ? 'A' : 'B';
        assert.deepEqual(list.map((m) => m.offset), Array.from({ length: top }, (_, k) => k + 1),
          `page ${page}: offsets not 1..${top} in order`);
        assert.equal(new Set(list.map((m) => m.text)).size, list.length, `page ${page}: a message shown twice`);
        for (const [text, offset] of confirmed) {
          assert.equal(list.find((m) => m.text === text)?.offset, offset, `page ${page}: ${text} (offset ${offset}) missing`);
        }
      }
      assert.deepEqual(lists[0], lists[1], 'the two pages differ');
      assert.ok(top >= PER_SOURCE, `only ${top} messages in the room`);
      // Unconfirmed publishes may have gone out or not; those that did are in both lists once.
      for (const f of failed) assert.ok(['unknown', 502, 503, 'fetch'].includes(f.code), `a publish refused: ${JSON.stringify(f)}`);
      for (const page of [a, b]) assert.deepEqual(await page.evaluate(() => window.unrecovered), []);
      const unconfirmedLost = failed.filter((f) => !lists[0].some((m) => m.text === f.text)).length;
      t.diagnostic(`${top} messages; ${confirmed.size} publishes confirmed, ${failed.length} not ` +
        `(${unconfirmedLost} of those never published); ` +
        `page B reconnected ${await b.evaluate(() => window.opens)} time(s)`);
      ok = true;
    } finally {
      if (browser) await browser.stop();
      for (const h of hosts) await h.stop();
      if (redis) await redis.dispose();
      if (ok || !process.env.FRAMEGATE_TEST_KEEP) rmSync(tmp, { recursive: true, force: true });
      else console.error(`kept ${tmp}`);
    }
  });
