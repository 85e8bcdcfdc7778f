// A throwaway Redis Cluster for the sharded pub/sub tests: 127.0.0.1,
// `primaries` primaries with `replicasPerPrimary` replicas each, one
// redis-server per node on a free port below 55536 (the cluster bus is
// port+10000), each in its own temporary directory, no persistence but the
// nodes.conf that lets a restarted node rejoin. Every wait is on what the
// nodes say (CLUSTER INFO, CLUSTER SHARDS), never a fixed sleep. Only the
// processes started here are ever killed, by their own handles.
import { spawn, execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, until } from './redis_server.mjs';

const HOST = '127.0.0.1';
const BUS_OFFSET = 10000;
const SLOTS = 16384;

// Nodes still running when this process exits (a test that threw before
// dispose()) are killed then, so none outlives the test run.
const running = new Set();
process.on('exit', () => { for (const proc of running) proc.kill('SIGKILL'); });

// The highest node port whose bus port is below the kernel's ephemeral
// range (32768 on Linux). An outgoing connection's port, even in
// TIME_WAIT, makes redis-server exit with EADDRINUSE, and a busy machine
// has thousands of them: ports no connect() hands out avoid that.
function lastPort() {
  let ephemeral = 32768;
  try { ephemeral = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]); } catch { /* not Linux */ }
  return Math.min(ephemeral, 65536) - 1 - BUS_OFFSET;
}

// `count` ports from 10000 up, each free with its bus port.
async function clusterPorts(count) {
  const [first, last] = [10000, lastPort()];
  const ports = [];
  while (ports.length < count) {
    const port = first + randomInt(last - first + 1);
    if (ports.includes(port)) continue;
    try {
      await freePort(port);
      await freePort(port + BUS_OFFSET);
    } catch { continue; }
    ports.push(port);
  }
  return ports;
}

const isRunning = (proc) => proc && proc.exitCode === null && proc.signalCode === null;

class Node {
  constructor(port, nodeTimeoutMs) {
    this.port = port;
    this.nodeTimeoutMs = nodeTimeoutMs;
    this.dir = mkdtempSync(join(tmpdir(), `fg-redis-cluster-${port}-`));
  }

  get pid() { return this.proc?.pid; }
  get alive() { return isRunning(this.proc); }

  // Starts (or restarts, with the nodes.conf it wrote) redis-server on this.port.
  start() {
    // A replica may always be promoted (validity factor 0): a test that
    // kills its primary should see a failover however long it has been idle.
    // Replicas sync at once (no diskless delay) and their offsets move every
    // second: CLUSTER SHARDS says a replica is "loading" until its offset
    // leaves 0, which with the default 10 s ping period takes 10 s.
    this.proc = spawn('redis-server', ['--port', String(this.port), '--bind', HOST, '--save', '', '--appendonly', 'no',
      '--dir', this.dir, '--cluster-enabled', 'yes', '--cluster-config-file', join(this.dir, 'nodes.conf'),
      '--cluster-node-timeout', String(this.nodeTimeoutMs), '--cluster-replica-validity-factor', '0',
      '--repl-diskless-sync-delay', '0', '--repl-ping-replica-period', '1',
      '--loglevel', 'warning'], { stdio: 'ignore' });
    const proc = this.proc;
    running.add(proc);
    this.exited = new Promise((resolve) => proc.on('exit', () => { running.delete(proc); resolve(); }));
  }

  async kill() {
    if (!this.alive) return;
    this.proc.kill('SIGKILL');
    await this.exited;
  }
}

// One node's CLUSTER SHARDS as [{ slots: [[from, to], ...], nodes: [{ port, role, health }] }],
// sorted, without what changes by itself (replication offsets), so two
// nodes' views compare with JSON.stringify.
function normalShards(shards) {
  return shards.map((s) => {
    const slots = [];
    for (let i = 0; i + 1 < s.slots.length; i += 2) slots.push([Number(s.slots[i]), Number(s.slots[i + 1])]);
    slots.sort((a, b) => a[0] - b[0]);
    const nodes = s.nodes.map((n) => ({ port: Number(n.port), role: n.role, health: n.health }))
      .sort((a, b) => a.port - b.port);
    return { slots, nodes };
  }).filter((s) => s.nodes.length > 0)
    .sort((a, b) => a.nodes[0].port - b.nodes[0].port);
}

class PortTaken extends Error {}

const inRanges = (slot, ranges) => ranges.some(([from, to]) => slot >= from && slot <= to);
const rangeSize = (ranges) => ranges.reduce((n, [from, to]) => n + to - from + 1, 0);

export class RedisCluster {
  // Starts the nodes, joins them with `redis-cli --cluster create`, and
  // resolves once every node says cluster_state:ok, every node's CLUSTER
  // SHARDS is the same, and every replica is online (synced).
  static async start({ primaries = 3, replicasPerPrimary = 1, nodeTimeoutMs = 2000, timeoutMs = 30000 } = {}) {
    for (let attempt = 1; ; ++attempt) {
      const c = new RedisCluster();
      c.byPort = new Map((await clusterPorts(primaries * (1 + replicasPerPrimary)))
        .map((p) => [p, new Node(p, nodeTimeoutMs)]));
      try {
        await c.create(primaries, replicasPerPrimary, timeoutMs);
        return c;
      } catch (e) {
        await c.dispose();
        // A port taken between its check and redis-server's bind: new ports.
        if (!(e instanceof PortTaken) || attempt === 3) throw e;
      }
    }
  }

  // start() on the ports chosen: the nodes up, then joined into one cluster.
  async create(primaries, replicasPerPrimary, timeoutMs) {
    const ports = [...this.byPort.keys()];
    for (const node of this.byPort.values()) node.start();
    const exited = () => [...this.byPort.values()].find((n) => !n.alive);
    await until(() => exited() || ports.every((p) => this.cli(p, 'PING') === 'PONG'),
      'every cluster node to answer PING', 5000);
    if (exited()) throw new PortTaken(`redis-server on port ${exited().port} exited at start`);
    execFileSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`),
      '--cluster-replicas', String(replicasPerPrimary), '--cluster-yes'],
    { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
    await this.settled('the new cluster', timeoutMs,
      (view) => view.filter((s) => s.nodes.length === 1 + replicasPerPrimary).length === primaries);
  }

  // "127.0.0.1:p1,127.0.0.1:p2,...": every node, as --redis-cluster takes them.
  get seeds() { return [...this.byPort.keys()].map((p) => `${HOST}:${p}`).join(','); }

  // [{ port, pid, role: 'primary' | 'replica' | undefined (not running), alive, dir }],
  // roles as each node reports itself (ROLE) now.
  get nodes() {
    return [...this.byPort.values()].map((n) => {
      let role;
      if (n.alive) {
        try { role = this.cli(n.port, 'ROLE').split('\n')[0] === 'master' ? 'primary' : 'replica'; } catch { /* down */ }
      }
      return { port: n.port, pid: n.pid, role, alive: n.alive, dir: n.dir };
    });
  }

  get livePorts() { return [...this.byPort.values()].filter((n) => n.alive).map((n) => n.port); }

  // redis-cli against one node (not following redirections), output trimmed.
  cli(port, ...args) {
    return execFileSync('redis-cli', ['-h', HOST, '-p', String(port), ...args],
      { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  }

  json(port, ...args) { return JSON.parse(this.cli(port, '--json', ...args)); }

  // One node's view of the shards (see normalShards).
  shards(port) { return normalShards(this.json(port, 'CLUSTER', 'SHARDS')); }

  id(port) { return this.cli(port, 'CLUSTER', 'MYID'); }

  slotOf(key) { return Number(this.cli(this.livePorts[0], 'CLUSTER', 'KEYSLOT', key)); }

  // The primary that owns `slot` in the view of the first running node.
  primaryForSlot(slot, view = this.shards(this.livePorts[0])) {
    const shard = view.find((s) => inRanges(slot, s.slots));
    return shard?.nodes.find((n) => n.role === 'master')?.port;
  }

  // The slot ranges `port` owns as a primary, in the first running node's view.
  slotsOf(port) {
    const shard = this.shards(this.livePorts[0]).find((s) => s.nodes.some((n) => n.port === port && n.role === 'master'));
    return shard ? shard.slots : [];
  }

  // Shard subscribers of `channel`: PUBSUB SHARDNUMSUB summed over the
  // running nodes of the shard that owns its slot (its primary, and its
  // replicas, where a client may SSUBSCRIBE too).
  shardNumsub(channel) {
    const slot = this.slotOf(channel);
    const shard = this.shards(this.livePorts[0]).find((s) => inRanges(slot, s.slots));
    let total = 0;
    for (const { port } of shard.nodes) {
      if (!this.byPort.get(port).alive) continue;
      total += Number(this.cli(port, 'PUBSUB', 'SHARDNUMSUB', channel).split('\n')[1]);
    }
    return total;
  }

  // Resolves once every running node says cluster_state:ok, all their
  // CLUSTER SHARDS agree, every slot has a running primary, and `extra(view)`.
  async settled(what, timeoutMs = 30000, extra = () => true) {
    let last = 'no answer';
    const done = () => {
      const live = this.livePorts;
      const infos = live.map((p) => [p, this.cli(p, 'CLUSTER', 'INFO')]);
      last = infos.map(([p, info]) => `${p}:${info.match(/cluster_state:(\w+)/)?.[1]}`).join(' ');
      const failing = infos.find(([, info]) => !info.includes('cluster_state:ok'));
      if (failing) {
        // Why it says fail, should it stay so: its slot counts and its own view.
        const [p, info] = failing;
        last += `; ${p}: ${(info.match(/cluster_slots_\w+:\d+/g) ?? []).join(' ')}; its CLUSTER NODES:\n`
          + this.cli(p, 'CLUSTER', 'NODES');
        return false;
      }
      const views = live.map((p) => JSON.stringify(this.shards(p)));
      last = views.join(' vs ');
      if (!views.every((v) => v === views[0])) return false;
      last = views[0];
      const view = JSON.parse(views[0]);
      const owners = view.filter((s) => s.slots.length > 0);
      return rangeSize(owners.flatMap((s) => s.slots)) === SLOTS
        && owners.every((s) => s.nodes.some((n) => n.role === 'master' && n.health === 'online'
          && this.byPort.get(n.port).alive))
        && view.every((s) => s.nodes.every((n) => n.health === 'online' || !this.byPort.get(n.port).alive))
        && extra(view);
    };
    try {
      await until(done, what, timeoutMs);
    } catch (e) {
      e.message += ` (waiting for cluster_state:ok and one CLUSTER SHARDS on every running node; last: ${last})`;
      throw e;
    }
  }

  // SIGKILLs one node and waits for it to exit (remembering the slots it
  // owned, for waitForFailover).
  async killNode(port) {
    const node = this.node(port);
    node.ownedSlots = this.slotsOf(port);
    await node.kill();
  }

  // Starts a killed node again on its port with its nodes.conf; resolves
  // once the cluster has settled with it online (a primary that was failed
  // over comes back as a replica of its successor).
  async restartNode(port, timeoutMs = 30000) {
    const node = this.node(port);
    if (node.alive) throw new Error(`node ${port} is running`);
    node.start();
    await until(() => this.cli(port, 'PING') === 'PONG', `node ${port} to answer PING`, 5000);
    await this.settled(`node ${port} to rejoin`, timeoutMs,
      (view) => view.some((s) => s.nodes.some((n) => n.port === port && n.health === 'online')));
  }

  // After killNode(deadPort) of a primary: resolves with the port of the
  // replica promoted in its place, once every running node sees it own the
  // dead primary's slots and says cluster_state:ok. With nodeTimeoutMs
  // 2000 (the default: 1000 let nodes of a machine busy with other tests
  // miss each other's pings and flag each other) this takes about 3-4 s.
  async waitForFailover(deadPort, timeoutMs = 30000) {
    const dead = this.node(deadPort);
    if (dead.alive) throw new Error(`node ${deadPort} is running: killNode() it first`);
    if (!dead.ownedSlots?.length) throw new Error(`node ${deadPort} owned no slots when it was killed`);
    const slot = dead.ownedSlots[0][0];
    let successor;
    await this.settled(`a replica to take over from ${deadPort}`, timeoutMs, (view) => {
      successor = this.primaryForSlot(slot, view);
      return successor !== deadPort && this.byPort.get(successor)?.alive;
    });
    return successor;
  }

  // Moves one slot, keys included, from its primary to primary `toPort`
  // by hand, as redis-cli --cluster reshard does for each slot: IMPORTING
  // on the target, MIGRATING on the source, MIGRATE of its keys 100 at a
  // time, then SETSLOT NODE on target, source and the other primaries.
  // Resolves once every node agrees toPort owns it.
  async moveSlot(slot, toPort, timeoutMs = 30000) {
    const fromPort = this.primaryForSlot(slot);
    if (fromPort === toPort) return;
    const [fromId, toId] = [this.id(fromPort), this.id(toPort)];
    this.cli(toPort, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', fromId);
    this.cli(fromPort, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', toId);
    for (;;) {
      const keys = this.cli(fromPort, 'CLUSTER', 'GETKEYSINSLOT', String(slot), '100').split('\n').filter(Boolean);
      if (keys.length === 0) break;
      const reply = this.cli(fromPort, 'MIGRATE', HOST, String(toPort), '', '0', '5000', 'KEYS', ...keys);
      if (reply !== 'OK') throw new Error(`MIGRATE of slot ${slot} to ${toPort}: ${reply}`);
    }
    const primaries = this.nodes.filter((n) => n.role === 'primary').map((n) => n.port);
    for (const port of [toPort, fromPort, ...primaries.filter((p) => p !== toPort && p !== fromPort)])
      this.cli(port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', toId);
    await this.settled(`slot ${slot} to move to ${toPort}`, timeoutMs,
      (view) => this.primaryForSlot(slot, view) === toPort);
  }

  // Moves `nSlots` slots from primary fromPort to primary toPort with
  // `redis-cli --cluster reshard`; resolves with the slots toPort gained,
  // once every node agrees.
  async reshard(fromPort, toPort, nSlots, timeoutMs = 30000) {
    const before = this.slotsOf(toPort);
    execFileSync('redis-cli', ['--cluster', 'reshard', `${HOST}:${fromPort}`, '--cluster-from', this.id(fromPort),
      '--cluster-to', this.id(toPort), '--cluster-slots', String(nSlots), '--cluster-yes'],
    { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] });
    await this.settled(`${nSlots} slots to move from ${fromPort} to ${toPort}`, timeoutMs,
      (view) => rangeSize(view.find((s) => s.nodes.some((n) => n.port === toPort)).slots) === rangeSize(before) + nSlots);
    const after = this.slotsOf(toPort);
    const gained = [];
    for (const [from, to] of after)
      for (let s = from; s <= to; ++s) if (!inRanges(s, before)) gained.push(s);
    return gained;
  }

  node(port) {
    const node = this.byPort.get(port);
    if (!node) throw new Error(`no cluster node on port ${port}`);
    return node;
  }

  // Kills every node and removes their directories.
  async dispose() {
    for (const node of this.byPort?.values() ?? []) {
      await node.kill();
      rmSync(node.dir, { recursive: true, force: true });
    }
  }
}
