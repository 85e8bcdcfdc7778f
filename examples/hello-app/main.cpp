// hello-worker: a framegate worker with one app of its own. /hello answers
// every text message M with "hello, M" (binary messages come back as they
// are). Everything else a worker does (the gateway links, credits, rooms,
// metrics, signals) is the SDK's: see fg::worker::run.
#include <memory>
#include <string>

#include <framegate/worker/run.hpp>

namespace {

class hello_app final : public fg::worker::app {
 public:
  void on_message(fg::worker::connection& c, fg::worker::message m) override {
    if (m.kind == fg::worker::message_kind::binary) {
      api().send(c.id(), m.kind, m.payload);
      return;
    }
    api().send(c.id(), m.kind, "hello, " + std::string(m.payload));
  }
};

}  // namespace

int main(int argc, char** argv) {
  fg::worker::app_registry apps;
  apps.mount("/hello", std::make_unique<hello_app>());
  return fg::worker::run(argc, argv, apps);
}
