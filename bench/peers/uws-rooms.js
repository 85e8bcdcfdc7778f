#!/usr/bin/env node
// uWebSockets.js rooms server, the `uws` peer of bench/run_fanout.sh: the
// /rooms JSON protocol in one process, in memory, each room a uWS topic.
// A publish is parsed in JavaScript once, then app.publish hands the
// delivery to uWS's topic tree, which writes it to every subscriber in C++:
// the fan-out itself runs no JavaScript, so this peer stands for uWS pub/sub.
// Protocol (as framegate's /rooms without history, ids or presence):
//   {"op":"join","room":R}  {"op":"leave","room":R}  {"op":"publish","room":R,"data":V}
//   every member of R, the publisher included if it is one, receives
//   {"room":R,"data":V}; anything else gets {"error":"..."}. No answer to a
//   join or a leave (framegate answers only when the request has an id).
//   V is re-serialized with JSON.stringify, as the Node cluster peer does.
// Settings as the other peers (uws-common.js): compression off,
// maxPayloadLength 1 MiB, no idle timeout, no slow member ever skipped.
// Usage: node uws-rooms.js [--port 0] [--host 127.0.0.1]
// Prints "listening on HOST:PORT" on stdout once it accepts connections.
'use strict';

const { load_uws, behavior, listen } = require('./uws-common');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const port = Number(arg('port', process.env.UWS_ROOMS_PORT ?? 0));
const host = arg('host', '127.0.0.1');
const loaded = load_uws('uws-rooms');
const error_text = (m) => JSON.stringify({ error: m });

const app = loaded.uws.App();
app.ws('/rooms', behavior(loaded.uws, {
  message: (ws, message) => {
    let m;
    try {
      // The ArrayBuffer is valid during this call only: decoded at once.
      m = JSON.parse(Buffer.from(message).toString());
    } catch {
      ws.send(error_text('invalid JSON'), false);
      return;
    }
    if (m === null || typeof m !== 'object' || typeof m.room !== 'string' || m.room.length === 0) {
      ws.send(error_text('room must be a non-empty string'), false);
      return;
    }
    if (m.op === 'join') ws.subscribe(m.room);
    else if (m.op === 'leave') ws.unsubscribe(m.room);
    else if (m.op === 'publish') {
      if (!('data' in m)) {
        ws.send(error_text('publish needs "data"'), false);
        return;
      }
      // app.publish, not ws.publish: the publisher receives its own message
      // when it is a member, as the protocol says.
      app.publish(m.room, `{"room":${JSON.stringify(m.room)},"data":${JSON.stringify(m.data)}}`, false);
    } else ws.send(error_text('op must be join, leave or publish'), false);
  },
}));
app.any('/*', (res) => {
  res.writeStatus('404 Not Found').end();
});
listen(loaded, app, host, port, 'uws-rooms', 'rooms as uWS topics, compression off');
