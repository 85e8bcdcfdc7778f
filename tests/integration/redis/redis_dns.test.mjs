// A Redis host name whose DNS does not answer (queries dropped, as behind
// a partition) must not stop the worker: hiredis resolves with a blocking
// getaddrinfo, which held the worker's loop for the resolver's whole
// timeout at every reconnect attempt, so that the gateway took the worker
// for dead (--link-timeout) and its clients went unanswered. The worker
// now resolves off its loop: it answers its clients all along, says why
// Redis is not reached, exits at once when stopped (no lookup is waited
// for), and connects as soon as the name resolves (read again at every
// attempt: a Redis that moves is found).
//
// Runs only inside in_private_network.sh: it mounts over /etc/resolv.conf
// and /etc/hosts and adds firewall rules, in namespaces of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, connect, nextMessage, sleep } from '../cluster/cluster.mjs';
import { RedisServer } from './redis_server.mjs';

const name = 'redis.framegate.test';
const dnsServer = '198.18.0.53';  // on this namespace's loopback; its queries are dropped

test('a Redis name whose DNS does not answer leaves the worker serving, and is found once it resolves', async () => {
  assert.equal(process.env.FRAMEGATE_PRIVATE_NETWORK, '1',
    'run through in_private_network.sh: this test mounts over /etc files and changes firewall rules');
  const dir = mkdtempSync(join(tmpdir(), 'fg-dns-'));
  const resolvConf = join(dir, 'resolv.conf');
  const hosts = join(dir, 'hosts');
  // Each lookup of an unknown name: 2 attempts x 2 s at least per query (A, AAAA).
  writeFileSync(resolvConf, `nameserver ${dnsServer}\noptions timeout:2 attempts:2\n`);
  writeFileSync(hosts, '127.0.0.1 localhost\n');
  execFileSync('ip', ['addr', 'add', `${dnsServer}/32`, 'dev', 'lo']);
  for (const proto of ['udp', 'tcp'])
    execFileSync('iptables', ['-A', 'INPUT', '-p', proto, '--dport', '53', '-j', 'DROP']);
  execFileSync('mount', ['--bind', resolvConf, '/etc/resolv.conf']);
  execFileSync('mount', ['--bind', hosts, '/etc/hosts']);

  const redis = await RedisServer.start();
  let cluster;
  try {
    cluster = await Cluster.start({
      workers: 1,
      gatewayArgs: ['--link-ping', '0.25', '--link-timeout', '1'],
      workerArgs: ['--redis', `redis://${name}:${redis.port}`],
    });
    let [worker] = cluster.workers;
    const failing = await worker.waitFor(new RegExp(`redis (publish|subscribe): cannot connect to redis://${name}.*`), 15000);

    // Lookups that hang for 4 s each, one after another: the worker answers
    // every message meanwhile, and the gateway never loses its link.
    const client = await connect(cluster.url('/echo'));
    for (let i = 0; i < 30; ++i) {
      client.send(`m${i}`);
      assert.equal((await nextMessage(client, 2000)).data, `m${i}`);
      await sleep(200);
    }
    assert.ok(!cluster.gateway.lines.some((l) => /no answer within --link-timeout/.test(l)),
      'the gateway cut the worker off: its loop stopped');
    // And the worker says why it does not reach Redis.
    assert.match(failing[0], new RegExp(`(timed out resolving|cannot resolve) ${name}`));
    client.close();

    // Stopped while a lookup hangs, it exits at once: nothing waits for the
    // lookup (SIGKILL after 2 s, well under one lookup).
    assert.deepEqual(await worker.stop('SIGTERM', 2000), { code: 0, signal: null },
      'the worker did not exit by itself: it waited for a DNS lookup');
    await cluster.restartWorker(0);

    // The name resolves now (from /etc/hosts, read at every lookup): found
    // at the next attempt, not behind the lookups still hanging.
    [worker] = cluster.workers;
    writeFileSync(hosts, `127.0.0.1 localhost\n127.0.0.1 ${name}\n`);
    await worker.waitFor(new RegExp(`redis subscribe: connected to redis://${name}:${redis.port}`), 15000);
    await worker.waitFor(new RegExp(`redis publish: connected to redis://${name}:${redis.port}`), 15000);
    const member = await connect(cluster.url('/rooms'));
    member.send(JSON.stringify({ op: 'join', room: 'R' }));
    member.send(JSON.stringify({ op: 'publish', room: 'R', data: 'through Redis' }));
    assert.equal((await nextMessage(member, 5000)).data, '{"room":"R","data":"through Redis","offset":1}');
    member.close();
  } finally {
    if (cluster) await cluster.stop();
    await redis.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});
