#include "worker/apps/builtin.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>

#include "worker/apps/echo_app.hpp"
#include "worker/apps/rooms_app.hpp"
#include "worker/apps/shout_app.hpp"
#include "worker/apps/slow_app.hpp"
#include "worker/apps/whoami_app.hpp"

namespace fg::worker {

namespace {

constexpr std::array<std::string_view, 3> builtin_paths{"/echo", "/rooms", "/shout"};

std::unique_ptr<app> make_builtin(std::string_view path) {
  if (path == "/echo") return std::make_unique<echo_app>();
  if (path == "/rooms") return std::make_unique<rooms_app>();
  if (path == "/shout") return std::make_unique<shout_app>();
  throw std::invalid_argument("no built-in app at '" + std::string(path) + "' (known: " + builtin_app_list() + ")");
}

}  // namespace

bool is_builtin_app(std::string_view path) {
  return std::find(builtin_paths.begin(), builtin_paths.end(), path) != builtin_paths.end();
}

std::string builtin_app_list() {
  std::string out;
  for (const auto path : builtin_paths) {
    if (!out.empty()) out += ", ";
    out += path;
  }
  return out;
}

void mount_builtin_apps(app_registry& registry, const builtin_options& options) {
  if (options.apps.empty()) {
    for (const auto path : builtin_paths) registry.mount(std::string(path), make_builtin(path));
  } else {
    for (const auto& path : options.apps) {
      if (path == slow_app_path || path == whoami_app_path || registry.find(path) != nullptr) continue;
      registry.mount(path, make_builtin(path));
    }
  }
  if (options.enable_test_apps) {
    registry.mount(std::string(slow_app_path), std::make_unique<slow_app>(options.slow_delay));
    registry.mount(std::string(whoami_app_path), std::make_unique<whoami_app>());
  }
}

}  // namespace fg::worker
