// Every number the gateway counts, declared in one place.
//
// Each I/O thread owns its counters and is the only one to write them:
// plain integers, no atomics, nothing on the data path but an addition
// (and, for histograms, a short bounds scan). A scrape asks every thread
// for a snapshot (a copy taken on that thread, posted back), so readers
// never race writers. docs/METRICS.md lists the exported names.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/metrics/buckets.hpp"
#include "common/metrics/histogram.hpp"
#include "gateway/auth/auth_error.hpp"
#include "gateway/ws/protocol.hpp"

namespace fg::gateway {

// Close codes as a bounded label: the codes RFC 6455 names, then ranges.
namespace close_code_group {
inline constexpr std::size_t named = 16;  // 1000..1015
inline constexpr std::size_t range_3xxx = named, range_4xxx = named + 1, other = named + 2, count = named + 3;
constexpr std::size_t of(std::uint16_t code) noexcept {
  if (code >= 1000 && code < 1000 + named) return code - 1000u;
  if (code >= 3000 && code <= 3999) return range_3xxx;
  if (code >= 4000 && code <= 4999) return range_4xxx;
  return other;
}
std::string label(std::size_t group);
}  // namespace close_code_group

// The HTTP statuses a handshake can be refused with.
namespace refusal_status {
inline constexpr std::array<unsigned, 11> all{400, 401, 403, 404, 405, 408, 426, 429, 431, 503, 0};  // 0: any other
constexpr std::size_t of(unsigned status) noexcept {
  for (std::size_t i = 0; i + 1 < all.size(); ++i)
    if (all[i] == status) return i;
  return all.size() - 1;
}
}  // namespace refusal_status

// Why a close waited for replies (message_sink::hold_close), as an index.
inline constexpr std::array<const char*, 2> held_reasons{"protocol_error", "client_close"};
constexpr std::size_t held_reason(bool by_client) noexcept { return by_client ? 1 : 0; }

// What a PROXY protocol header from a trusted balancer said, as an index:
// a client's address, the balancer speaking for itself (LOCAL, UNKNOWN),
// or nothing usable (refused with 400).
inline constexpr std::array<const char*, 3> proxy_results{"client", "local", "refused"};
enum class proxy_result : std::uint8_t { client, local, refused };

// What a trusted HTTP balancer's forwarding header said, as an index of
// forwarded_client::result: a client's address, no header (the balancer
// counts), or a hop without a known address (the nearest known one counts).
inline constexpr std::array<const char*, 3> forwarded_results{"client", "absent", "unknown"};

// What a connection's rate limit (--message-rate, --byte-rate) was hit by,
// and what was done, as one index: what * 2 + (dropped ? 1 : 0).
inline constexpr std::array<const char*, 2> rate_limit_what{"message", "bytes"};
inline constexpr std::array<const char*, 2> rate_limit_action{"closed", "dropped"};

// What a SIGHUP reload of the --jwt-* keys did: the new keys are in use,
// or they could not be loaded and the old ones stay.
inline constexpr std::array<const char*, 2> key_reload_results{"ok", "failed"};

// Text and binary, the two data opcodes, as array indices.
constexpr std::size_t data_index(ws::opcode op) noexcept { return op == ws::opcode::binary ? 1 : 0; }

// What one I/O thread's sessions count.
struct thread_counters {
  std::uint64_t connections_opened = 0;  // handshakes accepted
  std::uint64_t handshakes_refused = 0;
  std::array<std::uint64_t, refusal_status::all.size()> refused_by_status{};
  std::array<std::uint64_t, close_code_group::count> closed_by_code{};
  std::uint64_t protocol_errors = 0;
  std::array<std::uint64_t, ws::error_kinds> errors_by_kind{};
  std::uint64_t messages_in = 0;
  std::uint64_t messages_out = 0;
  std::array<std::uint64_t, 2> messages_received{}, messages_sent{};  // by data_index
  std::array<std::uint64_t, 2> payload_received{}, payload_sent{};
  std::uint64_t socket_read_bytes = 0;
  std::uint64_t socket_written_bytes = 0;
  std::uint64_t socket_writes = 0;  // send calls to client sockets that took bytes
  // System calls that wrote client sockets: one per send(), one per
  // io_uring batch of them (send_batch); socket_writes over it is the
  // writes per call.
  std::uint64_t socket_write_calls = 0;
  // The turn end's deferred client writes (a broadcast's): time slices
  // that wrote clients, and those cut with clients left, copied from the
  // thread's write_wave at snapshot time.
  std::uint64_t write_slices = 0;
  std::uint64_t write_slices_cut = 0;
  std::uint64_t dropped_messages = 0;                                   // --send-queue-policy drop
  std::uint64_t overflow_closes = 0;                                    // --send-queue-policy close (1008)
  std::uint64_t handshakes_rate_limited = 0;                            // 429 by --handshake-rate
  std::uint64_t refused_per_ip = 0;                                     // 429 by --max-connections-per-ip
  std::array<std::uint64_t, proxy_results.size()> proxy_headers{};      // by proxy_result (--proxy-protocol-from)
  std::array<std::uint64_t, forwarded_results.size()> forwarded_for{};  // by forwarded_client::result
  std::array<std::uint64_t, 4> rate_limited{};                          // by rate_limit_what * 2 + action
  std::uint64_t dropped_pongs = 0;  // --send-queue-policy drop, a pong to a client that pings and does not read
  std::uint64_t pings_sent = 0;
  std::uint64_t pong_timeouts = 0;
  std::uint64_t accept_backoffs = 0;  // accept failed (out of descriptors or memory): the listener rested
  std::uint64_t pool_bytes_shed = 0;  // pooled buffers and inflaters a quiet period freed
  std::uint64_t memory_trims = 0;     // malloc_trim runs after a shed (memory_release.hpp)
  std::array<std::uint64_t, held_reasons.size()> held_closes{};          // by held_reason
  std::array<std::uint64_t, held_reasons.size()> held_close_timeouts{};  // released by --close-timeout
  // permessage-deflate (RFC 7692). A broadcast compressed once counts once.
  std::uint64_t deflate_connections_opened = 0;  // negotiated; minus closed: the open ones
  std::uint64_t deflate_connections_closed = 0;
  std::uint64_t deflate_messages_in = 0;             // inflated
  std::uint64_t deflate_messages_out = 0;            // compressed
  std::uint64_t deflate_bytes_in_compressed = 0;     // payload bytes on the wire of the messages inflated
  std::uint64_t deflate_bytes_in_uncompressed = 0;   // ... and once inflated
  std::uint64_t deflate_bytes_out_uncompressed = 0;  // payload bytes of the messages compressed
  std::uint64_t deflate_bytes_out_compressed = 0;    // ... and on the wire
  std::uint64_t deflate_skipped = 0;  // to deflate connections uncompressed: below the threshold, or incompressible
  std::uint64_t deflate_messages_from_publisher = 0;  // of messages_out: the publisher's compression, none here
  // JWT at the handshake (--jwt-*): 401s by auth_error (index in auth::auth_refusals),
  // open connections closed with 4001 when their token's exp passed, and
  // SIGHUP key reloads (thread 0 counts those), by key_reload_results.
  std::array<std::uint64_t, auth::auth_refusals.size()> auth_refusals{};
  std::uint64_t auth_expired_closes = 0;
  std::array<std::uint64_t, 2> auth_key_reloads{};
  metrics::histogram message_size{metrics::buckets::size_bytes};
  metrics::histogram frames_per_read{metrics::buckets::count};
  // A client socket's readable event, from the read to the end of the
  // writes it caused (with --echo, the whole echo): the gateway's own time.
  metrics::histogram client_turn_ns{metrics::buckets::turn_ns};
  // From the kernel's receipt of the newest bytes of a read to the read:
  // time the data waited for this loop (--no-receive-timestamps: none).
  metrics::histogram receive_wait_ns{metrics::buckets::latency_ns};

  void add(const thread_counters& o);
};

// Why the gateway refused what a worker sent for a connection (the
// connection is closed with 1011, the link stays up), as an index.
inline constexpr std::array<const char*, 3> worker_rejections{"too_big", "invalid_utf8", "bad_close_code"};
enum class worker_rejection : std::uint8_t { too_big, invalid_utf8, bad_close_code };

// Why the gateway cut a worker's link off, as an index.
inline constexpr std::array<const char*, 3> link_cutoffs{"timeout", "backlog", "foreign_user"};
enum class link_cutoff : std::uint8_t { timeout, backlog, foreign_user };

// What the routing layer of one thread counts (worker mode).
struct routing_counters {
  std::uint64_t refused_no_worker = 0;     // 503
  std::uint64_t refused_unknown_path = 0;  // 404
  std::uint64_t connections_moved = 0;     // failovers
  std::uint64_t messages_replayed = 0;     // at-least-once: may reach a worker twice
  std::uint64_t credit_pauses = 0;
  std::uint64_t closed_no_worker = 0;    // 1013 after a failover found no worker
  std::uint64_t too_big_for_worker = 0;  // 1009: the worker's --max-envelope cannot carry the message
  std::uint64_t link_write_waits = 0;    // writes to a worker its socket did not take whole (--link-sndbuf)
  std::array<std::uint64_t, worker_rejections.size()> worker_rejected{};  // by worker_rejection
  std::array<std::uint64_t, link_cutoffs.size()> links_cut{};             // by link_cutoff
  metrics::histogram roundtrip_ns{metrics::buckets::latency_ns};
  metrics::histogram link_rtt_ns{metrics::buckets::latency_ns};
  metrics::histogram envelopes_per_write{metrics::buckets::count};
  metrics::histogram broadcast_recipients{metrics::buckets::count};
  // A link's readable event, from the read to the end of the client writes
  // the worker's envelopes caused.
  metrics::histogram link_turn_ns{metrics::buckets::turn_ns};

  void add(const routing_counters& o);
};

// One worker as one thread sees it.
struct worker_row {
  std::string worker;
  std::uint64_t links = 0;  // registered and up on this thread (0 or 1)
  std::uint64_t connections = 0;
  std::uint64_t routed = 0;         // counter
  std::uint64_t credit_pauses = 0;  // counter
  std::uint64_t unacked = 0;
  std::uint64_t unacked_bytes = 0;
  std::uint64_t replay_held_bytes = 0;  // the link blocks those payloads sit in (capacity)
};

// What a scrape gets from one thread.
struct thread_snapshot {
  thread_counters counters;
  std::uint64_t connections_active = 0;  // open sessions (handshake done, not closed)
  std::uint64_t send_queue_bytes = 0;
  bool routing = false;  // worker mode: the fields below are filled
  routing_counters routes;
  std::vector<worker_row> workers;
};

// What the admin listener counts (its own thread).
struct admin_counters {
  // POST /api/publish answers, by status. Every status the endpoint can give
  // is there from the start, so rate() and dashboards see zeros, not gaps.
  std::vector<std::pair<unsigned, std::uint64_t>> publishes_by_status{{200, 0}, {400, 0}, {401, 0}, {403, 0},
                                                                      {405, 0}, {413, 0}, {502, 0}, {503, 0}};
  void count_publish(unsigned status);
};

}  // namespace fg::gateway
