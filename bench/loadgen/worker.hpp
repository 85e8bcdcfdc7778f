#pragma once
// One event-loop thread: its share of the connections, one epoll instance,
// edge-triggered. Does the connect pacing, the handshakes, framing, echo
// checks and latency recording; the workload decides when to send.
#include <sys/epoll.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "connection.hpp"
#include "options.hpp"
#include "stats.hpp"
#include "timeline.hpp"
#include "workload.hpp"

namespace loadgen {

class worker final : private message_sink {
 public:
  worker(const options& opts, std::vector<std::uint32_t> global_indices, shared_state& shared,
         worker_progress& progress, std::uint64_t seed);
  ~worker();
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  void run() noexcept;  // the thread body; errors end up in result()
  const worker_result& result() const { return result_; }

 private:
  enum class stage { connecting, loading, closing, done };

  void loop_turn(std::uint64_t deadline);
  void start_connections(std::uint64_t now);
  void start_one(connection& c);
  void on_event(connection& c, std::uint32_t events, std::uint64_t now);
  void finish_connect(connection& c);
  void read_ready(connection& c, std::uint64_t now);
  void on_handshake_bytes(connection& c, std::uint64_t now);
  std::size_t process_frames(connection& c, const std::uint8_t* data, std::size_t len, std::uint64_t now);
  // A complete message: inflated first if it came compressed.
  void deliver(connection& c, std::uint8_t op, bool compressed, const std::uint8_t* p, std::size_t n,
               std::uint64_t now);
  void on_data_message(connection& c, std::uint8_t op, const std::uint8_t* p, std::size_t n, std::uint64_t now);
  void on_control_frame(connection& c, std::uint8_t op, const std::uint8_t* p, std::size_t n);
  void fail(connection& c, std::uint64_t& counter, std::string_view why, int err = 0);
  bool in_window() const noexcept { return turn_now_ >= times_.measure && turn_now_ < times_.end; }
  void close_fd(connection& c);
  void begin_load(std::uint64_t now);
  void begin_closing(std::uint64_t now);
  bool drained() const;
  void publish();
  std::uint32_t next_mask();

  bool has_room(const connection& c) const override;
  void queue_message(connection& c, std::uint64_t send_time_ns) override;
  void flush(connection& c) override;

  const options& opts_;
  shared_state& shared_;
  worker_progress& progress_;
  const timeline& times_;
  std::vector<connection> conns_;
  std::unique_ptr<workload> workload_;
  worker_result result_;
  // Templates (one, or payload_variants() with --payload json); a
  // message's first 8 bytes take its stamp, which picks its template.
  std::vector<std::vector<std::uint8_t>> payloads_;
  std::vector<std::uint8_t> scratch_;   // shared receive buffer
  std::vector<std::uint8_t> inflated_;  // --deflate: the message last inflated
  send_compressor compressor_;
  std::vector<epoll_event> events_;
  std::uint64_t rng_;
  int epfd_ = -1;
  stage stage_ = stage::connecting;
  bool end_seen_ = false;
  bool load_begun_ = false;  // the workload's begin() ran (at times_.load)
  std::size_t next_to_start_ = 0;
  std::uint64_t connect_start_ = 0;
  std::uint64_t last_echo_ = 0;  // arrival of the latest echo: the drain ends when they stop coming
  std::uint64_t turn_now_ = 0;   // clock read once per loop turn, after epoll returns
  std::uint64_t pending_ = 0;    // connecting or handshaking
  std::uint64_t open_ = 0;
  std::uint64_t settled_ = 0;  // open or failed, counted once per connection
  std::uint64_t drain_gap_ns_;
  std::size_t out_cap_;  // per-connection unsent bytes before a workload must wait
};

}  // namespace loadgen
