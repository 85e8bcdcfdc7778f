// The sink of a gateway thread in worker mode: the thread's route table
// (gateway/routing/route_table.hpp) wired to real sockets, with the
// acceptor its workers connect to and the timer of its link pings.
#pragma once

#include <optional>

#include "gateway/net/io_thread.hpp"
#include "gateway/routing/link_acceptor.hpp"
#include "gateway/routing/route_table.hpp"

namespace fg::gateway {

class worker_router final : public route_table {
 public:
  explicit worker_router(io_thread& home);
  ~worker_router() override;

  void stop() override;

 private:
  io_thread& home_;
  link_acceptor acceptor_;
  std::optional<event_loop::timer_id> ping_timer_;  // none with --link-ping 0
  bool stopped_ = false;
};

}  // namespace fg::gateway
