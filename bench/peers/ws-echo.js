#!/usr/bin/env node
// Node.js `ws` 8 echo server, tuned the way production users tune it, as the
// reference peer for bench/run_echo.sh:
//   - maxPayload 1 MiB (the ws default of 100 MiB is a memory risk),
//   - perMessageDeflate off (compression costs CPU on small messages), or
//     with --deflate on with ws's defaults (threshold 1024 B, context
//     takeover both ways, zlib level and memLevel defaults), as production
//     users turn it on; --deflate-threshold N changes the threshold,
//   - bufferutil / utf-8-validate native add-ons when installed (ws picks them up itself).
// Usage: node ws-echo.js [PORT] [HOST] [--deflate [--deflate-threshold N]]
//        (or WS_ECHO_PORT / WS_ECHO_HOST; PORT 0 = any free port)
// Prints "listening on HOST:PORT" on stdout once it accepts connections.
'use strict';

const { WebSocketServer } = require('ws');

const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(name);
  return i < 0 ? undefined : argv.splice(i, name === '--deflate' ? 1 : 2).slice(1)[0] ?? true;
};
const deflateThreshold = flag('--deflate-threshold');
const deflate = flag('--deflate') !== undefined;
const port = Number(argv[0] ?? process.env.WS_ECHO_PORT ?? 0);
const host = argv[1] ?? process.env.WS_ECHO_HOST ?? '127.0.0.1';

function has_module(name) {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

const wss = new WebSocketServer({
  host,
  port,
  maxPayload: 1024 * 1024,
  perMessageDeflate: deflate ? (deflateThreshold === undefined ? true : { threshold: Number(deflateThreshold) }) : false,
  clientTracking: true,
  backlog: 4096, // the idle benchmark opens thousands of connections quickly
});

wss.on('connection', (ws) => {
  // Echo with the same opcode: ws tells us whether the message was binary.
  ws.on('message', (data, is_binary) => {
    ws.send(data, { binary: is_binary });
  });
  ws.on('error', () => {}); // a client vanishing must not crash the server
});

wss.on('listening', () => {
  const addr = wss.address();
  const native = ['bufferutil', 'utf-8-validate'].filter(has_module);
  console.log(`listening on ${addr.address}:${addr.port}`);
  console.error(`[ws-echo] ws ${require('ws/package.json').version}, node ${process.version}, ` +
    `native add-ons: ${native.length ? native.join(', ') : 'none'}, ` +
    `perMessageDeflate ${deflate ? `on (threshold ${deflateThreshold ?? 1024})` : 'off'}`);
});

wss.on('error', (err) => {
  console.error(`[ws-echo] ${err.message}`);
  process.exit(1);
});

function shutdown() {
  for (const client of wss.clients) client.terminate();
  wss.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
