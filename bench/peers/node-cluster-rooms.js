#!/usr/bin/env node
// The Node.js cluster architecture the field uses for rooms across processes,
// as the reference peer for bench/run_fanout.sh:
//   - the primary accepts TCP connections (pauseOnConnect) and hands each
//     socket to a worker chosen by a hash of remoteAddress:remotePort
//     (sticky: one client's connection stays on one process);
//   - each worker runs `ws` 8 (maxPayload 1 MiB, no compression; with
//     --deflate perMessageDeflate on with ws's defaults: each send to each
//     member compressed on its own, with that connection's context) on an HTTP
//     server that only upgrades /rooms, and the `redis` 4 client: one
//     connection for PUBLISH, one for SUBSCRIBE;
//   - interest-based subscriptions: a worker subscribes channel
//     <prefix>room:<R> only while it has a local member of R;
//   - a publish goes to Redis as the finished delivery text; each subscribed
//     worker sends what comes back to its local members (the publisher
//     included if it is a member).
// Protocol (as framegate's /rooms):
//   {"op":"join","room":R}  {"op":"leave","room":R}  {"op":"publish","room":R,"data":V}
//   members receive {"room":R,"data":V}; anything else gets {"error":"..."}.
//   V is re-serialized with JSON.stringify (byte-exact for the benchmark's
//   payload, not for every JSON text: the usual Node way).
// Usage: node node-cluster-rooms.js [--port 0] [--host 127.0.0.1] [--workers 2]
//          [--redis redis://127.0.0.1:6379] [--channel-prefix nodebench:] [--deflate]
// Prints "listening on HOST:PORT" on stdout once every worker is ready.
'use strict';

const cluster = require('node:cluster');
const net = require('node:net');
const http = require('node:http');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const port = Number(arg('port', process.env.NODE_ROOMS_PORT ?? 0));
const host = arg('host', '127.0.0.1');
const workers = Number(arg('workers', 2));
const redisUrl = arg('redis', process.env.NODE_ROOMS_REDIS ?? 'redis://127.0.0.1:6379');
const prefix = arg('channel-prefix', 'nodebench:');
const deflate = process.argv.includes('--deflate');  // cluster workers see the same argv

// FNV-1a over "address:port": cheap and evenly spread.
function hash(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; ++i) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

if (cluster.isPrimary) {
  const pool = [];
  let ready = 0;
  let stopping = false;
  for (let i = 0; i < workers; ++i) {
    const w = cluster.fork();
    pool.push(w);
    w.on('message', (msg) => {
      if (msg === 'ready' && ++ready === workers) listen();
    });
  }
  cluster.on('exit', (w, code, signal) => {
    if (!stopping) {
      console.error(`worker ${w.process.pid} exited (${signal ?? code}); stopping`);
      stop(1);
    }
  });
  function listen() {
    const server = net.createServer({ pauseOnConnect: true }, (socket) => {
      const key = `${socket.remoteAddress}:${socket.remotePort}`;
      pool[hash(key) % pool.length].send('sticky', socket);
    });
    server.listen({ host, port, backlog: 4096 }, () => {
      const a = server.address();
      console.log(`listening on ${a.address}:${a.port}`);
      console.log(`pids primary=${process.pid} workers=${pool.map((w) => w.process.pid).join(',')}`);
    });
  }
  function stop(code) {
    stopping = true;
    for (const w of pool) w.process.kill('SIGTERM');
    setTimeout(() => process.exit(code), 300).unref();
    let left = pool.length;
    cluster.on('exit', () => {
      if (--left === 0) process.exit(code);
    });
  }
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));
} else {
  const { WebSocketServer } = require('ws');
  const { createClient } = require('redis');

  const rooms = new Map(); // room -> Set of local members
  const errorText = (m) => JSON.stringify({ error: m });

  async function main() {
    const pub = createClient({ url: redisUrl });
    const sub = pub.duplicate();
    pub.on('error', (e) => console.error(`redis pub: ${e.message}`));
    sub.on('error', (e) => console.error(`redis sub: ${e.message}`));
    await Promise.all([pub.connect(), sub.connect()]);

    function deliver(text, channel) {
      const members = rooms.get(channel.slice(prefix.length + 5)); // strip "<prefix>room:"
      if (!members) return;
      for (const ws of members) ws.send(text);
    }

    function join(ws, room) {
      let members = rooms.get(room);
      if (!members) {
        members = new Set();
        rooms.set(room, members);
        sub.subscribe(prefix + 'room:' + room, deliver).catch((e) => console.error(`subscribe: ${e.message}`));
      }
      members.add(ws);
      ws.rooms.add(room);
    }

    function leave(ws, room) {
      const members = rooms.get(room);
      ws.rooms.delete(room);
      if (!members || !members.delete(ws) || members.size > 0) return;
      rooms.delete(room);
      sub.unsubscribe(prefix + 'room:' + room).catch((e) => console.error(`unsubscribe: ${e.message}`));
    }

    const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, perMessageDeflate: deflate });
    const server = http.createServer((req, res) => res.writeHead(404).end());
    server.on('upgrade', (req, socket, head) => {
      if (req.url !== '/rooms') {
        socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.rooms = new Set();
        ws.on('message', (data, isBinary) => {
          let m;
          try {
            m = JSON.parse(isBinary ? data.toString() : data);
          } catch {
            ws.send(errorText('invalid JSON'));
            return;
          }
          if (m === null || typeof m !== 'object' || typeof m.room !== 'string' || m.room.length === 0) {
            ws.send(errorText('room must be a non-empty string'));
            return;
          }
          if (m.op === 'join') join(ws, m.room);
          else if (m.op === 'leave') leave(ws, m.room);
          else if (m.op === 'publish') {
            if (!('data' in m)) {
              ws.send(errorText('publish needs data'));
              return;
            }
            const text = `{"room":${JSON.stringify(m.room)},"data":${JSON.stringify(m.data)}}`;
            pub.publish(prefix + 'room:' + m.room, text).catch((e) => console.error(`publish: ${e.message}`));
          } else ws.send(errorText('op must be join, leave or publish'));
        });
        ws.on('close', () => {
          for (const room of [...ws.rooms]) leave(ws, room);
        });
        ws.on('error', () => {});
      });
    });

    process.on('message', (msg, socket) => {
      if (msg !== 'sticky' || !socket) return;
      server.emit('connection', socket);
      socket.resume();
    });
    process.on('SIGTERM', async () => {
      server.close();
      for (const ws of wss.clients) ws.terminate();
      await Promise.allSettled([pub.quit(), sub.quit()]);
      process.exit(0);
    });
    process.on('SIGINT', () => {}); // the primary decides
    process.send('ready');
  }
  main().catch((e) => {
    console.error(`worker ${process.pid}: ${e.stack ?? e}`);
    process.exit(1);
  });
}
