#pragma once
// Counters a worker keeps while it runs, and the merged run summary.
#include <atomic>
#include <cstdint>
#include <string>

#include "histogram.hpp"

namespace loadgen {

struct error_counts {
  std::uint64_t connect_failed = 0;      // socket/bind/connect error (refused, no ports, ...)
  std::uint64_t connect_timeout = 0;     // not open when the connect phase ended
  std::uint64_t handshake_rejected = 0;  // non-101 or a bad Sec-WebSocket-Accept
  std::uint64_t closed_by_server = 0;    // close frame from the server before we closed
  std::uint64_t disconnected = 0;        // EOF / reset / I/O error without a close frame
  std::uint64_t protocol_error = 0;      // invalid frame from the server

  std::uint64_t total() const {
    return connect_failed + connect_timeout + handshake_rejected + closed_by_server + disconnected + protocol_error;
  }
  void merge(const error_counts& o) {
    connect_failed += o.connect_failed;
    connect_timeout += o.connect_timeout;
    handshake_rejected += o.handshake_rejected;
    closed_by_server += o.closed_by_server;
    disconnected += o.disconnected;
    protocol_error += o.protocol_error;
  }
};

struct worker_result {
  std::uint64_t established = 0;      // handshakes completed
  std::uint64_t open_at_end = 0;      // still open when the measured window ended
  std::uint64_t sent = 0;             // messages queued, whole run
  std::uint64_t received = 0;         // echoes received, whole run
  std::uint64_t sent_window = 0;      // messages whose send stamp lies in the measured window
  std::uint64_t received_window = 0;  // echoes that arrived in the measured window
  std::uint64_t mismatched_length = 0;
  std::uint64_t mismatched_opcode = 0;
  std::uint64_t mismatched_payload = 0;  // corrupted bytes or an impossible stamp
  std::uint64_t unexpected_echoes = 0;   // more echoes than messages sent
  std::uint64_t unanswered = 0;          // sent but not echoed by the end of the drain, on open connections
  std::uint64_t unanswered_closed = 0;   // the same, on connections that died
  std::uint64_t backlog_at_end = 0;      // rate mode: scheduled messages never sent (client could not write)
  std::uint64_t close_codes_1009 = 0;    // server close codes that hint at limits
  std::uint64_t close_codes_1008 = 0;
  std::uint64_t close_codes_other = 0;
  std::uint64_t wire_in_window = 0;   // bytes read from the sockets during the measured window
  std::uint64_t wire_out_window = 0;  // bytes written to them
  std::uint64_t compressed_in = 0;    // messages that arrived compressed (permessage-deflate), whole run
  std::uint64_t compressed_out = 0;   // messages sent compressed
  error_counts errors;
  std::string first_error;
  histogram latency;  // ns, messages stamped in the measured window
  // Rate mode: how late the load generator itself wrote each message
  // relative to its intended time. Large values mean the load generator (or
  // a full socket, i.e. the server not reading) delayed the sends, and that
  // delay is inside `latency` too.
  histogram send_lag;

  void merge(const worker_result& o);
};

// What the main thread reads once a second while the workers run. Each
// worker publishes its own copy (relaxed stores once per loop turn), so the
// hot path never does an atomic read-modify-write.
struct alignas(64) worker_progress {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> open{0};
  std::atomic<std::uint64_t> settled{0};  // connections that are open or have failed
  std::atomic<std::uint64_t> errors{0};
  std::atomic<bool> finished{false};
};

}  // namespace loadgen
