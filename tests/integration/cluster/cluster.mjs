// Starts a real framegate cluster for tests: one framegate-gateway and N
// framegate-worker processes on a private link directory, the gateway on a
// free 127.0.0.1 port. Every process is stopped by PID in stop().
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const here = dirname(fileURLToPath(import.meta.url));
const buildBin = join(here, '..', '..', '..', 'build', 'bin');
export const gatewayBin = process.env.FRAMEGATE_GATEWAY_BIN ?? join(buildBin, 'framegate-gateway');
export const workerBin = process.env.FRAMEGATE_WORKER_BIN ?? join(buildBin, 'framegate-worker');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A child process whose stderr lines are kept and can be waited for.
class Child {
  constructor(name, bin, args) {
    this.name = name;
    this.lines = [];
    this.waiters = [];
    this.proc = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
    let partial = '';
    this.proc.stderr.on('data', (chunk) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop();
      for (const line of parts) {
        this.lines.push(line);
        if (process.env.FRAMEGATE_TEST_VERBOSE) console.error(`[${this.name}] ${line}`);
        this.waiters = this.waiters.filter((w) => !w.test(line));
      }
    });
  }

  get pid() { return this.proc.pid; }

  // Resolves with the regex match of the first line (past or future) matching `re`.
  waitFor(re, timeoutMs = 10000) {
    for (const line of this.lines) {
      const m = line.match(re);
      if (m) return Promise.resolve(m);
    }
    return this.waitForNext(re, timeoutMs);
  }

  // Like waitFor, but only lines printed from now on count.
  waitForNext(re, timeoutMs = 10000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no line matching ${re} within ${timeoutMs} ms\n` +
        this.lines.slice(-20).join('\n'))), timeoutMs);
      this.waiters.push({ test: (line) => { const m = line.match(re); if (m) { clearTimeout(timer); resolve(m); } return !!m; } });
    });
  }

  async stop(signal = 'SIGTERM', timeoutMs = 10000) {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill(signal);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), timeoutMs);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }
}

// Counts "worker 'ID' ... registered" lines of the gateway.
function registrations(gateway) {
  return gateway.lines.filter((l) => /worker '.*' \(pid \d+.*registered/.test(l)).length;
}

export class Cluster {
  static async start({ workers = 2, threads = 1, gatewayArgs = [], workerArgs = [] } = {}) {
    const c = new Cluster();
    c.linkDir = mkdtempSync(join(tmpdir(), 'fg-cluster-'));
    c.workerArgs = workerArgs;
    c.gatewayArgs = ['--threads', String(threads), '--link-dir', c.linkDir, ...gatewayArgs];
    c.gateway = new Child('gateway', gatewayBin, ['--listen', '127.0.0.1:0', ...c.gatewayArgs]);
    c.workers = [];
    try {
      const m = await c.gateway.waitFor(/listening on [^ ]+:(\d+)/);
      c.port = Number(m[1]);
      for (let i = 1; i <= workers; ++i) c.workers.push(c.startWorker(`w${i}`));
      await c.waitForRegistrations(workers);
    } catch (e) {
      await c.stop();  // a start that failed leaves no process and no directory behind
      throw e;
    }
    return c;
  }

  startWorker(id) {
    return new Child(id, workerBin, ['--id', id, '--link-dir', this.linkDir, ...this.workerArgs]);
  }

  async waitForRegistrations(count, timeoutMs = 10000) {
    const deadline = Date.now() + timeoutMs;
    while (registrations(this.gateway) < count) {
      if (Date.now() > deadline) throw new Error(`only ${registrations(this.gateway)} of ${count} worker registrations\n` +
        this.gateway.lines.slice(-20).join('\n'));
      await sleep(20);
    }
  }

  url(path = '/echo') { return `ws://127.0.0.1:${this.port}${path}`; }

  // Kills worker i (0-based) with SIGKILL, as a crash would.
  async crashWorker(i) {
    await this.workers[i].stop('SIGKILL');
  }

  async restartWorker(i) {
    const before = registrations(this.gateway);
    this.workers[i] = this.startWorker(this.workers[i].name);
    await this.waitForRegistrations(before + 1);
  }

  // Stops the gateway (SIGTERM: its clients get 1001; 'SIGKILL': a crash) and
  // starts it again on the same port and link directory; resolves once every
  // running worker registered with the new one.
  async restartGateway(signal = 'SIGTERM') {
    await this.gateway.stop(signal);
    this.gateway = new Child('gateway', gatewayBin, ['--listen', `127.0.0.1:${this.port}`, ...this.gatewayArgs]);
    await this.gateway.waitFor(/listening on [^ ]+:(\d+)/);
    const running = this.workers.filter((w) => w.proc.exitCode === null && w.proc.signalCode === null).length;
    await this.waitForRegistrations(running);
  }

  async stop() {
    const g = await this.gateway.stop();
    for (const w of this.workers) await w.stop();
    rmSync(this.linkDir, { recursive: true, force: true });
    return g;
  }

  gatewayRssKiB() {
    const status = readFileSync(`/proc/${this.gateway.pid}/status`, 'utf8');
    return Number(status.match(/VmRSS:\s+(\d+)/)[1]);
  }
}

// Opens a ws client and resolves once open; messages are queued so tests can await them.
export async function connect(url, options = {}) {
  const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers ?? {} });
  ws.inbox = [];
  ws.waiting = [];
  ws.on('message', (data, isBinary) => {
    const msg = { data: isBinary ? data : data.toString(), isBinary };
    const w = ws.waiting.shift();
    if (w) w(msg); else ws.inbox.push(msg);
  });
  ws.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
  });
  return ws;
}

// The next message of a client, or a rejection after timeoutMs.
export function nextMessage(ws, timeoutMs = 5000) {
  if (ws.inbox.length) return Promise.resolve(ws.inbox.shift());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { ws.waiting = ws.waiting.filter((w) => w !== done); reject(new Error('no message within ' + timeoutMs + ' ms')); }, timeoutMs);
    const done = (m) => { clearTimeout(timer); resolve(m); };
    ws.waiting.push(done);
  });
}

// Resolves true if no message arrives within ms.
export async function silentFor(ws, ms) {
  await sleep(ms);
  return ws.inbox.length === 0;
}

// What the /whoami test app (--enable-test-apps) answers a connection to
// `path` with `headers`: { worker, ... }, the worker that serves it.
export async function whoami(cluster, { path = '/whoami', headers = {} } = {}) {
  const ws = await connect(cluster.url(path), { headers });
  ws.send('who');
  const reply = JSON.parse((await nextMessage(ws)).data);
  ws.close();
  await ws.closed;
  return reply;
}

// `perWorker` /rooms clients on every worker of cluster `c` (started with
// `--sticky-key header:x-user` and --enable-test-apps): /whoami tells which
// worker a key lands on, so members are placed on every worker deliberately.
// Each member gets `.worker` ("<tag>/<worker id>", or the id without a tag).
export async function placeMembers(c, perWorker, tag = '') {
  const byWorker = {};
  for (let k = 0; Object.values(byWorker).flat().length < perWorker * c.workers.length && k < 500; ++k) {
    const key = `${tag || 'member'}-${k}`;
    const { worker } = await whoami(c, { headers: { 'x-user': key } });
    byWorker[worker] ??= [];
    if (byWorker[worker].length < perWorker) byWorker[worker].push(key);
  }
  if (Object.keys(byWorker).length !== c.workers.length)
    throw new Error(`members landed on ${Object.keys(byWorker).length} of ${c.workers.length} workers`);
  const members = [];
  for (const [worker, keys] of Object.entries(byWorker))
    for (const key of keys)
      members.push(Object.assign(await connect(c.url('/rooms'), { headers: { 'x-user': key } }),
                                 { worker: tag ? `${tag}/${worker}` : worker }));
  return members;
}

export const joinRoom = (ws, room) => ws.send(JSON.stringify({ op: 'join', room }));

export { sleep };
