// A throwaway redis-server for the cluster tests: 127.0.0.1 on a free port,
// stopped (or crashed) by PID, restartable on the same port. No persistence
// unless asked: `persistent` keeps every write in an append-only file
// (fsync always) in a temporary directory, so even a SIGKILL loses nothing.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A loopback port nothing listens on: any (port 0), or `port` itself, which
// rejects (EADDRINUSE) when taken.
export async function freePort(port = 0) {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => { const { port: bound } = s.address(); s.close(() => resolve(bound)); });
  });
}

export class RedisServer {
  static async start({ persistent = false } = {}) {
    const r = new RedisServer();
    r.port = await freePort();
    if (persistent) r.dir = mkdtempSync(join(tmpdir(), 'fg-redis-'));
    await r.restart();
    return r;
  }

  get url() { return `redis://127.0.0.1:${this.port}`; }

  // Starts redis-server on this.port and waits until it answers PING.
  async restart(timeoutMs = 5000) {
    const storage = this.dir ? ['--dir', this.dir, '--appendonly', 'yes', '--appendfsync', 'always']
      : ['--appendonly', 'no'];
    this.proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '',
      ...storage, '--loglevel', 'warning'], { stdio: 'ignore' });
    this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try { if (this.cli('PING') === 'PONG') return; } catch { /* not up yet */ }
      await sleep(20);
    }
    throw new Error(`redis-server on port ${this.port} did not answer within ${timeoutMs} ms`);
  }

  cli(...args) {
    return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(this.port), ...args],
      { encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  }

  // { channel: subscribers } from PUBSUB NUMSUB.
  numsub(...channels) {
    const lines = this.cli('PUBSUB', 'NUMSUB', ...channels).split('\n');
    const out = {};
    for (let i = 0; i + 1 < lines.length; i += 2) out[lines[i]] = Number(lines[i + 1]);
    return out;
  }

  async kill(signal = 'SIGKILL') {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill(signal);
    await this.exited;
  }

  // Stops it for good and removes its files.
  async dispose() {
    await this.kill();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

// Resolves once `fn()` is true; rejects after timeoutMs with `what`.
export async function until(fn, what, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last;
    try { if (await fn()) return; } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ': ' + last.message : ''}`);
    await sleep(25);
  }
}
