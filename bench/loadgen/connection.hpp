#pragma once
// State of one client connection. Owned by exactly one worker thread, so no
// field needs synchronisation.
#include <cstdint>
#include <string>

#include "byte_buffer.hpp"
#include "deflate.hpp"

namespace loadgen {

enum class conn_state : std::uint8_t {
  idle,         // not started yet
  connecting,   // non-blocking connect() in progress
  handshaking,  // upgrade request sent, waiting for 101
  open,         // frames flow
  closing,      // our close frame sent, waiting for the server's
  closed,       // fd closed; reused only by storm mode (connect_slot)
};

// What every connection has, whatever the mode: what connection_driver.hpp
// works with.
struct link_state {
  int fd = -1;
  conn_state state = conn_state::idle;
  bool want_write = false;  // last send() was short: wait for EPOLLOUT before trying again
  std::uint32_t global_index = 0;
  std::uint32_t connects = 0;   // connects started on this slot (storm mode reconnects it)
  std::string expected_accept;  // until the handshake completes
  byte_buffer in;               // only a partial frame (or the handshake) waits here
  byte_buffer out;              // frames not yet accepted by the kernel
  deflate_state deflate;        // --deflate: what this connection agreed to
};

// A connection of the echo modes (rate, window, idle).
struct connection : link_state {
  std::uint8_t frag_opcode = 0;
  std::uint64_t phase_ns = 0;     // rate mode: offset of this connection's send slot
  std::uint64_t next_seq = 0;     // rate mode: index of the next scheduled message
  std::uint64_t outstanding = 0;  // messages queued/sent whose echo has not come back
  byte_buffer fragments;          // a fragmented echo being reassembled (rare)
};

}  // namespace loadgen
