// The seam between the route table (which worker serves whom, credits,
// failover) and the sockets that carry envelopes to workers. worker_link
// implements link_port over a Unix socket; tests use fakes
// (tests/fakes/gateway_fakes.hpp) and drive the table without a socket.
//
// Thread-safety: everything belongs to one gateway I/O thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "common/byte_buffer.hpp"
#include "common/link/hot_envelopes.hpp"
#include "framegate/link.pb.h"

namespace fg::gateway {

// Where a link put a client message's payload: `offset` bytes into
// `block`, which does not change there while anyone holds it. The route
// table keeps the block for replay instead of a copy of the payload.
struct stored_payload {
  const std::shared_ptr<byte_buffer>& block;
  std::size_t offset;
};

// One link to one worker, as the route table uses it.
class link_port {
 public:
  virtual ~link_port() = default;
  // Queues an envelope; queued envelopes leave together at the end of the loop turn.
  virtual void send(const framegate::link::Envelope& e) = 0;
  // Queues a client message (the hot path: encoded without building an
  // Envelope), even on a closed link, and says where its payload is.
  virtual stored_payload send_message(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload,
                                      std::uint64_t seq) = 0;
  // Closes the link; link_events::on_link_lost follows before this returns.
  virtual void close(std::string_view why) = 0;
  // Bytes queued or being written that the worker has not taken yet.
  [[nodiscard]] virtual std::size_t pending_bytes() const noexcept = 0;
};

// What links report, in the order they happen.
class link_events {
 public:
  virtual ~link_events() = default;
  // A worker connected; nothing is known of it until its Register arrives.
  virtual void on_link_opened(link_port& link) = 0;
  virtual void on_link_envelope(link_port& link, const framegate::link::Envelope& e) = 0;
  // A Send read in place (the hot path: no Envelope is built for it). A
  // Send the fast reader declined arrives through on_link_envelope.
  virtual void on_link_send(link_port& link, const fg::link::send_view& send) = 0;
  // After the envelopes of one readiness (all the link had, up to a
  // bound), even if one of them closed the link: what they made ready can
  // be written.
  virtual void on_link_batch_end() = 0;
  // The link is closed (by either side); `link` is not used after this.
  virtual void on_link_lost(link_port& link, std::string_view why) = 0;
};

}  // namespace fg::gateway
