#!/usr/bin/env node
// uWebSockets.js echo server, the `uws` peer of bench/run_echo.sh: the uWS
// C++ core (uSockets epoll loop, frame parsing, UTF-8 validation, writes)
// driven from JavaScript, from the npm package @trufflesuite/uws-js-unofficial
// (uWebSockets.js v20.30 prebuilt for Node 16, 18 and 20).
//   - every message back with the same opcode, from the `message` callback:
//     each echo costs one call into JavaScript and one back, which is what
//     separates it from native uWS (bench/peers/uws/);
//   - settings as ws-echo.js (uws-common.js): compression off,
//     maxPayloadLength 1 MiB, no idle timeout, no reply ever dropped.
// Usage: node uws-echo.js [PORT] [HOST]   (or UWS_ECHO_PORT / UWS_ECHO_HOST; PORT 0 = any free port)
// Prints "listening on HOST:PORT" on stdout once it accepts connections.
'use strict';

const { load_uws, behavior, listen } = require('./uws-common');

const argv = process.argv.slice(2);
const port = Number(argv[0] ?? process.env.UWS_ECHO_PORT ?? 0);
const host = argv[1] ?? process.env.UWS_ECHO_HOST ?? '127.0.0.1';
const loaded = load_uws('uws-echo');

const app = loaded.uws.App().ws('/*', behavior(loaded.uws, {
  message: (ws, message, is_binary) => {
    ws.send(message, is_binary);
  },
}));
listen(loaded, app, host, port, 'uws-echo', 'compression off');
