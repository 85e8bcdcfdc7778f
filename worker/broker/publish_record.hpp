// One publish of this worker, from publish() until Redis acknowledged it
// and (when its members wait for it) its own copy came back. Shared by the
// outbox (until acknowledged) and the de-duplication (until its copy is
// settled): either may outlive the other.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "worker/app.hpp"
#include "worker/broker/redis_envelope.hpp"

namespace fg::worker {

struct publish_record {
  std::uint64_t seq = 0;
  std::string room;
  std::string wire;                                  // envelope header + payload: what PUBLISH sends
  std::size_t header = redis_envelope_header_bytes;  // its header's size (version 2 is longer)
  bool owed_local = false;                           // our members get it from its copy coming back
  bool numbered = true;                              // with history: through the history script
  std::function<void(publish_receipt)> done;         // publish_options::done, called once
  long long expect = -1;  // subscribers it should reach (a flush after an outage); -1: no expectation
  std::chrono::steady_clock::time_point written;  // PUBLISH handed to hiredis, for its round trip

  [[nodiscard]] std::string_view payload() const { return std::string_view(wire).substr(header); }
};

using publish_record_ptr = std::shared_ptr<publish_record>;

}  // namespace fg::worker
