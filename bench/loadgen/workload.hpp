#pragma once
// The three workload modes. A workload decides when each connection sends;
// the worker owns sockets, framing and bookkeeping, and offers this sink.
#include <cstdint>
#include <memory>
#include <vector>

#include "connection.hpp"
#include "options.hpp"
#include "timeline.hpp"

namespace loadgen {

class message_sink {
 public:
  virtual bool has_room(const connection& c) const = 0;
  // Queues one message stamped with send_time_ns (absolute monotonic).
  virtual void queue_message(connection& c, std::uint64_t send_time_ns) = 0;
  virtual void flush(connection& c) = 0;  // may close c on a socket error

 protected:
  ~message_sink() = default;
};

class workload {
 public:
  virtual ~workload() = default;
  // The load phase starts: every connection open now takes part.
  virtual void begin(std::vector<connection>& conns, std::uint64_t now) = 0;
  // Sends what is due; returns when it next wants to run (UINT64_MAX: never).
  virtual std::uint64_t tick(std::uint64_t now) = 0;
  // Echoes arrived on c, or its socket became writable again: send more if due.
  virtual void top_up(connection& c, std::uint64_t now) = 0;
  // Rate mode: messages scheduled before the end that were never sent
  // because the connection could not write (the server fell behind).
  virtual std::uint64_t backlog_at_end() const { return 0; }
};

std::unique_ptr<workload> make_workload(const options& opts, const timeline& times, message_sink& sink);

}  // namespace loadgen
