// What the uWebSockets.js peers (uws-echo.js, uws-rooms.js) share: loading
// uWS from @trufflesuite/uws-js-unofficial without its silent fallback, the
// settings every peer uses, and listening with the "listening on" line.
//
// The package's own entry point (src/uws.js), when its prebuilt binary does
// not load (another Node ABI, platform or architecture), warns and returns a
// JavaScript re-implementation on top of `ws`: a benchmark would then measure
// ws under uWS's name. So the binary is required directly, and a peer that
// cannot load it exits with the reason instead of starting.
'use strict';

const path = require('node:path');

const PACKAGE = '@trufflesuite/uws-js-unofficial';

function load_uws(tag) {
  let dir;
  try {
    dir = path.dirname(require.resolve(`${PACKAGE}/package.json`));
  } catch {
    console.error(`[${tag}] ${PACKAGE} is not installed (npm ci in bench/, or tools/setup.sh)`);
    process.exit(3);
  }
  const binary = path.join(dir, 'binaries',
    `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  try {
    const uws = require(binary);
    const version = require(`${PACKAGE}/package.json`).version;
    return { uws, version, binary: path.basename(binary) };
  } catch (e) {
    console.error(`[${tag}] ${PACKAGE} has no uWS binary for node ${process.version} ` +
      `(${process.platform}-${process.arch}, ABI ${process.versions.modules}; it ships Node 16, 18 and 20 ` +
      `for Linux x64/arm64/arm, macOS and Windows x64): ${e.message}`);
    process.exit(3);
  }
}

// The WebSocket behaviour of every uWS peer, as the ws peers are set up:
// compression off, maxPayloadLength 1 MiB, no idle timeout or automatic pings
// (ws has neither; the idle benchmark holds silent connections), and a
// backpressure limit (64 MiB) at which uWS never skips a slow receiver: ws
// drops nothing, and a skipped message would count as lost, not as latency.
function behavior(uws, handlers) {
  return {
    compression: uws.DISABLED,
    maxPayloadLength: 1024 * 1024,
    idleTimeout: 0,
    sendPingsAutomatically: false,
    maxBackpressure: 64 * 1024 * 1024,
    ...handlers,
  };
}

// Listens on host:port (0: any free port), prints "listening on HOST:PORT" on
// stdout (what the benchmark scripts wait for) and `about` on stderr; exits
// on SIGTERM/SIGINT without waiting for open connections (the run is over).
function listen(loaded, app, host, port, tag, about) {
  const { uws, version, binary } = loaded;
  let listen_socket = null;
  app.listen(host, port, (token) => {
    if (!token) {
      console.error(`[${tag}] cannot listen on ${host}:${port}`);
      process.exit(1);
    }
    listen_socket = token;
    console.log(`listening on ${host}:${uws.us_socket_local_port(token)}`);
    console.error(`[${tag}] ${PACKAGE} ${version} (${binary}), node ${process.version}, ${about}`);
  });
  const shutdown = () => {
    if (listen_socket) uws.us_listen_socket_close(listen_socket);
    process.exit(0);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

module.exports = { PACKAGE, load_uws, behavior, listen };
