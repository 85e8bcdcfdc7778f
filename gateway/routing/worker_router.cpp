#include "gateway/routing/worker_router.hpp"

#include <algorithm>
#include <string>

#include "common/link/link_socket.hpp"

namespace fg::gateway {

worker_router::worker_router(io_thread& home)
    : route_table(home.config(), {home.shared().gateway_id, home.index()}, home.compressor(),
                  [&home] { home.uncork(); }),
      home_(home),
      acceptor_(home.context(), link::link_socket_path(home.config().link_dir, home.index()),
                max_worker_envelope(home.config()), *this, counters()),
      ping_timer_(home.context().get_executor()) {
  schedule_link_ping();
}

worker_router::~worker_router() { stop(); }

void worker_router::stop() {
  if (stopped_) return;
  stopped_ = true;
  ping_timer_.cancel();
  acceptor_.stop();
  route_table::stop();
}

void worker_router::schedule_link_ping() {
  if (home_.config().link_ping.count() == 0) return;
  ping_timer_.expires_after(home_.config().link_ping);
  ping_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    tick(std::chrono::steady_clock::now());
    schedule_link_ping();
  });
}

}  // namespace fg::gateway
