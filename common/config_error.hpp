// A start-up failure that only the operator can fix: a bad option, an
// unreadable secret file, an explicitly configured port that is taken.
// Every binary exits with config_error_exit for it, so that a supervisor can
// tell it from a crash and stop instead of restarting in a loop.
#pragma once

#include <stdexcept>

namespace fg {

// The exit status of a configuration error (CLI11's usage errors included).
inline constexpr int config_error_exit = 2;

class config_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fg
