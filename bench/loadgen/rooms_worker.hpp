#pragma once
// One event-loop thread of the rooms mode (see rooms.hpp): its share of the
// members and publishers on a connection_driver (sockets, handshakes,
// framing), the joins, the publishes on schedule and the check of every
// delivery.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "connection_driver.hpp"
#include "histogram.hpp"
#include "options.hpp"
#include "rooms_layout.hpp"
#include "stats.hpp"

namespace loadgen {

// What the main thread tells the workers: the stage, and once it is 2 the
// times, which are plain fields written before the release store.
struct shared_phase {
  std::atomic<int> stage{0};  // 0 connect, 1 join, 2 load (times valid), read with acquire
  std::atomic<bool> stop{false};
  std::uint64_t load = 0, measure = 0, end = 0, drain_end = 0;
};

// What each worker publishes for the main thread's progress lines (relaxed).
struct rooms_progress {
  std::atomic<std::uint64_t> open{0}, settled{0}, errors{0}, published{0}, expected{0}, delivered{0}, duplicates{0},
      bad{0};
  std::atomic<bool> finished{false};
};

struct rooms_result {
  std::unique_ptr<histogram> latency = std::make_unique<histogram>();
  std::uint64_t established = 0;
  error_counts errors;
  std::uint64_t published = 0, expected = 0, delivered = 0, duplicates = 0, reorders = 0, misrouted = 0, malformed = 0,
                server_errors = 0, unexpected = 0;
  std::uint64_t with_offset = 0;  // deliveries that carried the room's offset (history on)
  // Sequences missing below the highest one a member got from a publisher:
  // lost for good (a connection is FIFO), unlike the tail still in flight
  // when the drain ended.
  std::uint64_t holes = 0;
  std::uint64_t wire_in = 0, wire_out = 0;  // socket bytes in the measured window
  std::uint64_t compressed_in = 0, compressed_out = 0;
  std::string first_error, first_bad_message;

  void merge(const rooms_result& o);
};

// The sequences a member has seen from one publisher.
struct pub_track {
  std::uint64_t max_seen = 0;
  bool any = false;
  std::vector<std::uint64_t> bits;
};

struct rooms_connection : link_state {
  bool member = false, publisher = false, joined = false;
  std::uint32_t room = 0, pub_id = 0;
  std::uint64_t phase_ns = 0, next_seq = 0;
  std::vector<pub_track> seen;  // by publisher id, sized on the first delivery
};

class rooms_worker final : private connection_driver<rooms_worker, rooms_connection> {
 public:
  rooms_worker(const options& opts, const layout& lay, std::vector<std::uint32_t> indices, shared_phase& shared,
               rooms_progress& prog, std::uint64_t seed);

  void run() noexcept;  // the thread body; errors end up in res()
  const rooms_result& res() const { return res_; }

 private:
  friend class connection_driver<rooms_worker, rooms_connection>;

  // connection_driver's hooks (see there).
  void step(std::uint64_t now, std::uint64_t& deadline);
  void send_closes();
  void report_progress();
  static constexpr std::uint64_t max_frame_len = 1ULL << 20;
  static bool may_be_compressed(std::uint8_t op) { return op == 0x1; }  // deliveries are whole text messages
  rooms_result& tally() { return res_; }
  void on_frame(rooms_connection& c, const frame_header& h, bool compressed, const std::uint8_t* p, std::size_t n,
                std::uint64_t now);
  void on_open(rooms_connection& c) {
    if (shared_.stage.load(std::memory_order_acquire) >= 1) send_join(c);
  }
  // Each recv() reads the clock: a delivery's latency ends when it was read,
  // not when epoll returned a batch of sockets.
  std::uint64_t arrival_time(std::uint64_t) const { return now_ns(); }
  void count_in(std::size_t bytes, std::uint64_t now) {
    if (in_window(now)) res_.wire_in += bytes;
  }
  void count_out(std::size_t bytes) {
    if (in_window(now_ns())) res_.wire_out += bytes;
  }

  void loop();
  void count_holes();
  void send_joins();
  void send_join(rooms_connection& c);
  // Sends every publish due at or before now (and before the end); returns
  // the time of the next one.
  std::uint64_t publish_due(std::uint64_t now);
  bool in_window(std::uint64_t now) const {
    return shared_.stage.load(std::memory_order_acquire) >= 2 && now >= shared_.measure && now < shared_.end;
  }
  void note_bad(std::uint64_t& counter, const std::uint8_t* p, std::size_t n);
  void on_message(rooms_connection& c, const std::uint8_t* p, std::size_t n, std::uint64_t now);

  const layout& lay_;
  shared_phase& shared_;
  rooms_progress& prog_;
  std::vector<rooms_connection*> pubs_;
  std::uint64_t interval_ns_;
  std::uint64_t drain_gap_ns_;
  std::uint64_t connect_deadline_ = 0;  // a connection still in progress by then is a failed connect
  std::uint64_t last_delivery_ = 0;
  bool joins_sent_ = false, end_seen_ = false;
  rooms_result res_;
  std::string publish_text_;
};

}  // namespace loadgen
