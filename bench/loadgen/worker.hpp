#pragma once
// One event-loop thread of the echo modes: its share of the connections on a
// connection_driver (sockets, handshakes, framing), the echo checks and the
// latency recording; the workload decides when to send.
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "connection_driver.hpp"
#include "options.hpp"
#include "stats.hpp"
#include "timeline.hpp"
#include "workload.hpp"

namespace loadgen {

class worker final : private message_sink, private connection_driver<worker, connection> {
 public:
  worker(const options& opts, std::vector<std::uint32_t> global_indices, shared_state& shared,
         worker_progress& progress, std::uint64_t seed);

  void run() noexcept;  // the thread body; errors end up in result()
  const worker_result& result() const { return result_; }

 private:
  friend class connection_driver<worker, connection>;

  // connection_driver's hooks (see there).
  void step(std::uint64_t now, std::uint64_t& deadline);
  void send_closes();
  void report_progress();
  static constexpr std::uint64_t max_frame_len = 256ULL << 20;
  static bool may_be_compressed(std::uint8_t op) { return op == 0x1 || op == 0x2; }
  worker_result& tally() { return result_; }
  void on_frame(connection& c, const frame_header& h, bool compressed, const std::uint8_t* p, std::size_t n,
                std::uint64_t now);
  void send_more(connection& c, std::uint64_t now) {
    if (load_begun_) workload_->top_up(c, now);
  }
  void on_closed(connection& c);
  void count_in(std::size_t bytes, std::uint64_t) {
    if (in_window()) result_.wire_in_window += bytes;
  }
  void count_out(std::size_t bytes) {
    if (in_window()) result_.wire_out_window += bytes;
  }

  // A complete message: inflated first if it came compressed.
  void deliver(connection& c, std::uint8_t op, bool compressed, const std::uint8_t* p, std::size_t n,
               std::uint64_t now);
  void on_data_message(connection& c, std::uint8_t op, const std::uint8_t* p, std::size_t n, std::uint64_t now);
  void on_control_frame(connection& c, std::uint8_t op, const std::uint8_t* p, std::size_t n);
  bool in_window() const noexcept { return turn_now_ >= times_.measure && turn_now_ < times_.end; }
  void begin_load();
  bool drained() const;

  bool has_room(const connection& c) const override;
  void queue_message(connection& c, std::uint64_t send_time_ns) override;
  void flush(connection& c) override { connection_driver::flush(c); }

  shared_state& shared_;
  worker_progress& progress_;
  const timeline& times_;
  std::unique_ptr<workload> workload_;
  worker_result result_;
  // Templates (one, or payload_variants() with --payload json); a
  // message's first 8 bytes take its stamp, which picks its template.
  std::vector<std::vector<std::uint8_t>> payloads_;
  bool end_seen_ = false;
  bool load_begun_ = false;      // the workload's begin() ran (at times_.load)
  std::uint64_t last_echo_ = 0;  // arrival of the latest echo: the drain ends when they stop coming
  std::uint64_t drain_gap_ns_;
  std::size_t out_cap_;  // per-connection unsent bytes before a workload must wait
};

}  // namespace loadgen
