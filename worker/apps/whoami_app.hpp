// /whoami (test app, mounted only with --enable-test-apps): answers every
// message with which worker serves the connection and what the gateway said
// about it. Tests use it to observe routing: sticky keys, failover, spread.
#pragma once

#include <nlohmann/json.hpp>

#include "worker/app.hpp"

namespace fg::worker {

class whoami_app final : public app {
 public:
  void on_message(connection& c, message) override {
    const auto& info = c.info();
    const nlohmann::json reply{{"worker", api().worker_id()},
                               {"conn", info.id},
                               {"sticky_key", info.sticky_key},
                               {"resumed", info.resumed},
                               {"path", info.path},
                               {"query", info.query},
                               {"remote_address", info.remote_address},
                               {"user", info.user},
                               {"rooms_restricted", info.rooms_restricted},
                               {"rooms_allowed", info.rooms_allowed}};
    api().send(c.id(), message_kind::text, reply.dump());
  }
};

}  // namespace fg::worker
