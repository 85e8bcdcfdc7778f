#pragma once
// Storm mode (--mode storm): a reconnect storm, measured as handshakes per
// second. --connections slots each loop: connect, send the upgrade request
// (with ?token= when --token or --token-file is given), wait for 101, send a
// close frame, wait for the server's, close the socket, and connect again at
// once. The window counts the 101s that arrive in it; their latency is from
// connect() to the 101. No message is sent. A refused upgrade (say a 401 for
// a bad token) is an error and the slot connects again.
#include "options.hpp"

namespace loadgen {

// Runs the whole storm benchmark; returns the process exit code.
int run_storm(const options& opts);

}  // namespace loadgen
