// The apps that ship with the worker, and how --apps picks among them.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "worker/runtime/app_registry.hpp"

namespace fg::worker {

inline constexpr std::string_view slow_app_path = "/slow";
inline constexpr std::string_view whoami_app_path = "/whoami";

// /echo, /rooms and /shout (not the test app /slow).
bool is_builtin_app(std::string_view path);
// "/echo, /rooms, /shout", for help and error texts.
std::string builtin_app_list();

struct builtin_options {
  std::vector<std::string> apps;  // empty: every built-in app
  bool enable_test_apps = false;  // adds /slow
  std::chrono::milliseconds slow_delay{50};
};

// Throws std::invalid_argument on an unknown path.
void mount_builtin_apps(app_registry& registry, const builtin_options& options);

}  // namespace fg::worker
