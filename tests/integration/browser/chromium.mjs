// Debian's headless Chromium for the browser tests, started by us (so it is
// stopped by PID) with a fresh profile, and driven over CDP by playwright-core.
// Never downloads a browser.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';
export const chromiumMissing = existsSync(chromiumPath)
  ? false
  : `${chromiumPath} is missing: install Debian's chromium (tools/setup.sh does)`;

export class Chromium {
  static async start(timeoutMs = 30000) {
    const c = new Chromium();
    c.profile = mkdtempSync(join(tmpdir(), 'fg-chromium-'));
    c.proc = spawn(chromiumPath, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage', `--user-data-dir=${c.profile}`,
      '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0', 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    c.exited = new Promise((resolve) => c.proc.on('exit', (code, signal) => resolve({ code, signal })));
    try {
      const endpoint = await new Promise((resolve, reject) => {
        let seen = '';
        const timer = setTimeout(() => reject(new Error(`chromium printed no DevTools endpoint within ${timeoutMs} ms:\n${seen}`)), timeoutMs);
        c.proc.stderr.on('data', (chunk) => {
          seen += chunk.toString();
          const m = seen.match(/DevTools listening on (ws:\/\/\S+)/);
          if (m) { clearTimeout(timer); resolve(m[1]); }
        });
        c.exited.then(({ code, signal }) => { clearTimeout(timer); reject(new Error(`chromium exited (${code ?? signal}):\n${seen}`)); });
      });
      c.browser = await chromium.connectOverCDP(endpoint);
      c.context = c.browser.contexts()[0];
      return c;
    } catch (e) {
      await c.stop();
      throw e;
    }
  }

  newPage() { return this.context.newPage(); }

  async stop(timeoutMs = 5000) {
    const running = () => this.proc.exitCode === null && this.proc.signalCode === null;
    if (this.browser) {
      // Browser.close shuts Chromium down with its helper processes, which a
      // signal to the main process leaves writing the profile for a while.
      const cdp = await this.browser.newBrowserCDPSession().catch(() => null);
      if (cdp) await cdp.send('Browser.close').catch(() => {});
      await this.browser.close().catch(() => {});  // disconnects
      if (running()) await Promise.race([this.exited, new Promise((r) => setTimeout(r, timeoutMs))]);
    }
    if (running()) {
      this.proc.kill('SIGTERM');
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), timeoutMs);
      await this.exited;
      clearTimeout(timer);
    }
    // Chromium's helper processes may still write to the profile for a moment
    // after the main process exits: retry, and never let a leftover temporary
    // directory fail a test or skip the rest of its clean-up.
    try {
      rmSync(this.profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    } catch (e) {
      console.error(`# could not remove the Chromium profile ${this.profile}: ${e.message}`);
    }
  }
}
