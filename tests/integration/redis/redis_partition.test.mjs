// A partition between the workers and Redis: packets vanish, no FIN, no
// RST (iptables DROP on Redis's port). Both connections of each worker
// must be given up within --redis-timeout, not after TCP's 15 minutes of
// retransmissions, so that the broker knows it is cut off (broker_up 0,
// publishes buffered and counted). Redis does not notice: the workers'
// old connections, subscriptions and all, stay there; when the network
// heals each worker removes its own (CLIENT KILL), so that the flush of
// what was published meanwhile waits for the live subscribers and reaches
// every member exactly once.
//
// Another worker's subscription that the partition left on Redis still
// counts for the publisher's flush gate until that worker reconnects and
// removes it; a flush that goes before then reaches the dead connection
// (about one run in six here). That worker reads the message from the
// room's history once it has resubscribed (the broker's refill): without
// it, this test failed in those runs.
//
// Runs only inside in_private_network.sh: its firewall rules must not
// touch the host's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Cluster, joinRoom, nextMessage, placeMembers, silentFor } from '../cluster/cluster.mjs';
import { RedisServer, until } from './redis_server.mjs';

const timeoutS = 2;

// Both directions of Redis's port: the requests and the replies.
function partition(port, action) {
  for (const dir of ['--dport', '--sport'])
    execFileSync('iptables', [action, 'INPUT', '-p', 'tcp', dir, String(port), '-j', 'DROP']);
}

function lostLines(worker) {
  return worker.lines.filter((l) => /redis (publish|subscribe): connection lost/.test(l));
}

test(`a partition is noticed within --redis-timeout ${timeoutS}, healed, and loses nothing`, async () => {
  assert.equal(process.env.FRAMEGATE_PRIVATE_NETWORK, '1',
    'run through in_private_network.sh: this test changes firewall rules');
  const redis = await RedisServer.start();
  let cluster;
  let cut = false;
  try {
    cluster = await Cluster.start({
      workers: 2,
      gatewayArgs: ['--sticky-key', 'header:x-user'],
      workerArgs: ['--enable-test-apps', '--redis', redis.url, '--redis-timeout', String(timeoutS)],
    });
    const members = await placeMembers(cluster, 1);
    assert.equal(members.length, 2);
    for (const m of members) joinRoom(m, 'R');
    await until(() => redis.numsub('framegate:room:R')['framegate:room:R'] === 2, 'both subscriptions in Redis');
    members[0].send('{"op":"publish","room":"R","data":1}');
    for (const m of members) assert.equal((await nextMessage(m)).data, '{"room":"R","data":1,"offset":1}', m.worker);

    partition(redis.port, '-A');
    cut = true;
    const cutAt = Date.now();
    // A publish on the wire: its bytes stay unacknowledged.
    members[0].send('{"op":"publish","room":"R","data":2}');
    // Each worker gives up both connections: the publish connection by the
    // unacknowledged bytes (or keepalive), the idle subscribe one by
    // keepalive. Old code: about 30 s for the idle one, 15 min for the other.
    for (const w of cluster.workers)
      await until(() => lostLines(w).length >= 2, `${w.name} giving up both Redis connections`, 8000 + 2000 * timeoutS);
    const noticedAfter = Date.now() - cutAt;
    for (const w of cluster.workers)
      for (const l of lostLines(w)) assert.match(l, /timed out/i, `${w.name}: ${l}`);
    // Nothing was delivered across the cut.
    for (const m of members) assert.ok(await silentFor(m, 0), `${m.worker} got a message during the partition`);

    partition(redis.port, '-D');
    cut = false;
    for (const w of cluster.workers) {
      await w.waitFor(/redis subscribe: reconnected to/, 15000);
      await w.waitFor(/redis publish: reconnected to/, 15000);
    }
    // Each worker removed its connections the partition left on Redis
    // (Redis itself notices an idle one only at its tcp-keepalive, 300 s):
    // the subscribers Redis counts are the two live ones, not four. Redis
    // may have closed one itself first (its retransmission after the heal
    // met the worker's closed port), so the worker's kill found nothing:
    // the kill was still asked and answered.
    for (const w of cluster.workers)
      for (const conn of ['subscribe', 'publish'])
        await w.waitFor(new RegExp(`redis ${conn}: (removed its earlier connection|its earlier connection .* was already gone)`), 15000);
    await until(() => redis.numsub('framegate:room:R')['framegate:room:R'] === 2, 'the two live subscriptions');
    // The publish made during the partition, once, in order, then a new one.
    for (const m of members)
      assert.equal((await nextMessage(m, 15000)).data, '{"room":"R","data":2,"offset":2}', m.worker);
    members[1].send('{"op":"publish","room":"R","data":3}');
    for (const m of members) assert.equal((await nextMessage(m)).data, '{"room":"R","data":3,"offset":3}', m.worker);
    for (const m of members) assert.ok(await silentFor(m, 500), `${m.worker} got a message twice`);
    console.log(`partition noticed after ${noticedAfter} ms (--redis-timeout ${timeoutS} s)`);
    for (const m of members) m.close();
  } catch (e) {
    // The workers' logs say which connection went when: without them a
    // failure here shows only the assertion.
    for (const w of cluster?.workers ?? []) console.log(`--- ${w.name}\n${w.lines.join('\n')}`);
    throw e;
  } finally {
    if (cut) partition(redis.port, '-D');
    if (cluster) await cluster.stop();
    await redis.kill();
  }
});
