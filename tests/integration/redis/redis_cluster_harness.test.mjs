// The Redis Cluster harness itself (redis_cluster.mjs), against real
// redis-server nodes: every slot served, a killed primary replaced by its
// replica and rejoining as one, a slot moved by hand (keys and shard
// subscribers included) and by redis-cli --cluster reshard, nothing left
// after dispose(). The worker's sharded pub/sub tests rely on each of these.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { RedisCluster } from './redis_cluster.mjs';
import { until } from './redis_server.mjs';

const SLOTS = 16384;

// `redis-cli SSUBSCRIBE channel` on one node, its pushes collected as lines.
function shardSubscriber(port, channel) {
  const proc = spawn('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'SSUBSCRIBE', channel],
    { stdio: ['ignore', 'pipe', 'ignore'] });
  const sub = { proc, output: '' };
  proc.stdout.on('data', (d) => { sub.output += d; });
  return sub;
}

const isRunning = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };

test('a 3+3 Redis Cluster: slots, moves, failover, dispose', async (t) => {
  const cluster = await RedisCluster.start({ primaries: 3, replicasPerPrimary: 1 });
  let sub;
  try {
    await t.test('every slot is served by a primary with a replica', () => {
      const nodes = cluster.nodes;
      assert.equal(nodes.length, 6);
      assert.equal(nodes.filter((n) => n.role === 'primary').length, 3);
      assert.ok(nodes.every((n) => n.port < 55536 && n.pid > 0));
      assert.equal(cluster.seeds, nodes.map((n) => `127.0.0.1:${n.port}`).join(','));
      const shards = cluster.shards(nodes[0].port);
      const owned = shards.flatMap((s) => s.slots).reduce((sum, [from, to]) => sum + to - from + 1, 0);
      assert.equal(owned, SLOTS);
      for (const s of shards) assert.deepEqual(s.nodes.map((n) => n.role).sort(), ['master', 'replica']);
      for (const slot of [0, 5460, 5461, 16383]) assert.ok(cluster.primaryForSlot(slot));
    });

    // Before any slot moves: redis-server 7.0 (Debian 12 ships 7.0.15) can
    // leave a replica with a slot of its primary's marked "not claimed by
    // its owner" after a reshard into that primary (a stale message races
    // the primary's own). Promoted, the replica keeps the mark, and the old
    // primary coming back with its older claim takes the slot and drops it
    // on turning replica: the new primary says cluster_state:fail for good
    // (redis/redis#12564, fixed in 7.2.4). 1 run in 20-80 failed so here.
    await t.test('a killed primary is replaced by its replica and rejoins as a replica', async () => {
      const victim = cluster.primaryForSlot(0);
      const started = Date.now();
      await cluster.killNode(victim);
      const successor = await cluster.waitForFailover(victim);
      t.diagnostic(`failover after ${Date.now() - started} ms`);
      assert.notEqual(successor, victim);
      assert.equal(cluster.primaryForSlot(0), successor);
      assert.equal(cluster.nodes.find((n) => n.port === successor).role, 'primary');

      await cluster.restartNode(victim);
      assert.equal(cluster.nodes.find((n) => n.port === victim).role, 'replica');
      assert.equal(cluster.primaryForSlot(0), successor);
    });

    await t.test('moveSlot moves the keys, and the slot\'s subscribers are told sunsubscribe', async () => {
      const channel = 'framegate:room:moved';
      const slot = cluster.slotOf(channel);
      const from = cluster.primaryForSlot(slot);
      const to = cluster.nodes.find((n) => n.role === 'primary' && n.port !== from).port;
      // 250 keys in its slot: three MIGRATE batches.
      cluster.cli(from, 'MSET', ...Array.from({ length: 250 }, (_, i) => [`{${channel}}:${i}`, 'v']).flat());
      sub = shardSubscriber(from, channel);
      await until(() => cluster.shardNumsub(channel) === 1, 'the shard subscriber', 5000);

      await cluster.moveSlot(slot, to);
      assert.equal(cluster.primaryForSlot(slot), to);
      assert.equal(cluster.cli(to, 'CLUSTER', 'COUNTKEYSINSLOT', String(slot)), '250');
      assert.equal(cluster.cli(from, 'SPUBLISH', channel, 'x'), `MOVED ${slot} 127.0.0.1:${to}`);
      // The old owner drops its subscribers of a slot it no longer serves
      // and says so, on a connection that stays open.
      await until(() => sub.output.includes('sunsubscribe'), 'a sunsubscribe push', 5000);
      assert.equal(cluster.shardNumsub(channel), 0);
      assert.equal(sub.proc.exitCode, null);
    });

    await t.test('reshard moves slots with redis-cli --cluster reshard', async () => {
      const [a, b] = cluster.nodes.filter((n) => n.role === 'primary').map((n) => n.port);
      const gained = await cluster.reshard(a, b, 5);
      assert.equal(gained.length, 5);
      for (const slot of gained) assert.equal(cluster.primaryForSlot(slot), b);
    });
  } finally {
    sub?.proc.kill();
    const nodes = cluster.nodes;
    await cluster.dispose();
    assert.ok(nodes.every((n) => !isRunning(n.pid) && !existsSync(n.dir)), 'dispose() leaves no node or directory');
  }
});
