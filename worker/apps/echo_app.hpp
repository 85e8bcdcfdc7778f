// /echo: every message comes back unchanged, same kind (text or binary).
#pragma once

#include "worker/app.hpp"

namespace fg::worker {

class echo_app final : public app {
 public:
  void on_message(connection& c, message m) override { api().send(c.id(), m.kind, m.payload); }
};

}  // namespace fg::worker
