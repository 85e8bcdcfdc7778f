#pragma once
// One event-loop thread of the storm mode (see storm.hpp): its share of the
// client slots on a connection_driver. Each slot connects, completes the
// upgrade, sends a close frame at once, waits for the server's, and connects
// again, until the measured window ends.
#include <atomic>
#include <cstdint>
#include <vector>

#include "connection.hpp"
#include "connection_driver.hpp"
#include "histogram.hpp"
#include "options.hpp"
#include "stats.hpp"

namespace loadgen {

// Fixed by the main thread before the workers start.
struct storm_times {
  std::uint64_t measure = 0, end = 0;
  std::atomic<bool> stop{false};  // interrupted: close what is open and finish
};

struct alignas(64) storm_progress {
  std::atomic<std::uint64_t> handshakes{0}, cycles{0}, errors{0};
  std::atomic<bool> finished{false};
};

struct storm_result {
  histogram latency;              // connect() to the 101 arriving (ns), handshakes in the window
  std::uint64_t established = 0;  // 101s, whole run
  std::uint64_t handshakes_window = 0;
  std::uint64_t cycles = 0;         // closes answered by the server, whole run
  std::uint64_t cycles_window = 0;  // ... in the window
  std::uint64_t abandoned = 0;      // still connecting or handshaking when the run ended
  error_counts errors;
  std::string first_error;
  std::uint64_t compressed_in = 0, compressed_out = 0;  // never: no messages flow

  void merge(const storm_result& o);
};

struct storm_connection : link_state {
  std::uint64_t started_ns = 0;  // this cycle's connect()
};

class storm_worker final : private connection_driver<storm_worker, storm_connection> {
 public:
  storm_worker(const options& opts, std::vector<std::uint32_t> indices, storm_times& times, storm_progress& prog,
               std::uint64_t seed);

  void run() noexcept;  // the thread body; errors end up in res()
  const storm_result& res() const { return res_; }

 private:
  friend class connection_driver<storm_worker, storm_connection>;

  // connection_driver's hooks (see there).
  void step(std::uint64_t now, std::uint64_t& deadline);
  void send_closes();
  void report_progress();
  static constexpr std::uint64_t max_frame_len = 4096;
  static bool may_be_compressed(std::uint8_t) { return false; }
  storm_result& tally() { return res_; }
  void on_frame(storm_connection& c, const frame_header& h, bool compressed, const std::uint8_t* p, std::size_t n,
                std::uint64_t now);
  void on_open(storm_connection& c);
  void on_closed(storm_connection& c);
  void count_in(std::size_t, std::uint64_t) {}
  void count_out(std::size_t) {}

  bool in_window(std::uint64_t now) const { return now >= times_.measure && now < times_.end; }
  void connect(storm_connection& c, std::uint64_t now);

  storm_times& times_;
  storm_progress& prog_;
  std::vector<storm_connection*> again_;  // closed since the last step(): connect again there
  std::vector<storm_connection*> due_;
  bool started_ = false;
  storm_result res_;
};

}  // namespace loadgen
