// Logging set-up shared by every framegate process: spdlog to stderr, one
// named logger per component, plain text or one JSON object per line.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace fg {

// Configures the default sink; throws std::invalid_argument on an unknown level.
void init_logging(const std::string& level, bool json);

// Readiness lines ("listening on HOST:PORT") are a contract with scripts,
// tests and the supervisor: they go out at info, or at the logger's own
// level when that is higher, so --log-level warn does not hide them.
inline spdlog::level::level_enum readiness_level(const spdlog::logger& logger) {
  return std::max(spdlog::level::info, logger.level());
}

// A logger named after a component ("gateway", "worker", ...).
std::shared_ptr<spdlog::logger> component_logger(const std::string& component);

}  // namespace fg
