// The bundled browser demo, end to end in headless Chromium: two gateways
// serving deploy/demo, one worker each, rooms across them through Redis.
// Page A (gateway 1) and page B (gateway 2) join room "demo"; what A sends
// must appear on B's page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Cluster } from '../cluster/cluster.mjs';
import { RedisServer, until } from '../redis/redis_server.mjs';
import { Chromium, chromiumMissing } from './chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const demoDir = process.env.FRAMEGATE_DEMO_DIR ?? join(here, '..', '..', '..', 'deploy', 'demo');
const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function joinRoom(page, url, name, room) {
  await page.goto(url);
  await page.locator('#state[data-state="open"]').waitFor({ timeout: 10000 });
  await page.fill('#name', name);
  await page.fill('#room', room);
  await page.click('#join');
  await page.locator('#message:enabled').waitFor({ timeout: 5000 });
}

test('a message sent on gateway 1\'s page shows on gateway 2\'s page', { skip: chromiumMissing, timeout: 150000 }, async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'fg-browser-demo-'));
  let redis, browser, ok = false;
  const hosts = [];
  try {
    redis = await RedisServer.start();
    for (let i = 0; i < 2; ++i)
      hosts.push(await Cluster.start({
        workers: 1,
        gatewayArgs: ['--static-dir', demoDir, '--admin', 'off'],
        workerArgs: ['--redis', redis.url],
      }));
    browser = await Chromium.start();
    const [a, b] = [await browser.newPage(), await browser.newPage()];
    await joinRoom(a, `http://127.0.0.1:${hosts[0].port}/`, 'Alice', 'demo');
    await joinRoom(b, `http://127.0.0.1:${hosts[1].port}/`, 'Bob', 'demo');
    // Joins are not acknowledged: wait until both workers subscribed the room.
    await until(() => redis.numsub('framegate:room:demo')['framegate:room:demo'] === 2, 'both workers subscribed to demo');

    await a.fill('#message', 'hello from A');
    await a.press('#message', 'Enter');
    const received = b.locator('#messages li', { hasText: 'hello from A' });
    await received.waitFor({ timeout: 10000 });
    assert.match(await received.innerText(), /^Alice\s*hello from A/);
    assert.match(await b.locator('#messages').innerText(), /hello from A/);
    assert.equal(await b.locator('#state').getAttribute('data-state'), 'open');
    // The sender sees its own message once, marked as its own.
    await a.locator('#messages li.mine', { hasText: 'hello from A' }).waitFor({ timeout: 5000 });
    assert.equal(await a.locator('#messages li', { hasText: 'hello from A' }).count(), 1);

    const shot = join(tmp, 'page-b.png');
    await b.screenshot({ path: shot, fullPage: true });
    const png = readFileSync(shot);
    assert.ok(png.length > 1000, `screenshot is only ${png.length} bytes`);
    assert.deepEqual(png.subarray(0, 8), pngSignature, 'screenshot is not a PNG');
    ok = true;
  } finally {
    if (browser) await browser.stop();
    for (const h of hosts) await h.stop();
    if (redis) await redis.kill('SIGTERM');
    if (ok || !process.env.FRAMEGATE_TEST_KEEP) rmSync(tmp, { recursive: true, force: true });
    else console.error(`kept ${tmp}`);
  }
});
