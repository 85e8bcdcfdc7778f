#include "gateway/routing/worker_router.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "common/link/link_socket.hpp"

namespace fg::gateway {

worker_router::worker_router(io_thread& home)
    : route_table(home.config(), {home.shared().gateway_id, home.index()}, home.compressor(),
                  [&home] { home.uncork_at_turn_end(); }),
      home_(home),
      acceptor_(home.loop(), link::link_socket_path(home.config().link_dir, home.index()),
                max_worker_envelope(home.config()), home.config().link_sndbuf, *this, counters()) {
  if (home.config().link_ping.count() != 0)
    ping_timer_ = home.loop().every(home.config().link_ping, [this] { tick(std::chrono::steady_clock::now()); });
}

worker_router::~worker_router() { stop(); }

void worker_router::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (ping_timer_) home_.loop().cancel(*std::exchange(ping_timer_, std::nullopt));
  acceptor_.stop();
  route_table::stop();
}

}  // namespace fg::gateway
