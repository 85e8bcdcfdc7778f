// Logging set-up shared by every framegate process: spdlog to stderr, one
// named logger per component, plain text or one JSON object per line.
// Nothing on the data path logs at info: lines are per event (a worker
// lost, a limit hit for the first time), never per message; lines about a
// connection carry `conn=<id>`.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace fg {

// --log-level and --log-format, the same for every binary.
struct logging_options {
  std::string level = "info";   // trace, debug, info, warn, error, off
  std::string format = "text";  // text | json (one object per line: time, level, component, pid, msg)
};

// Configures the default sink; throws std::invalid_argument on an unknown level.
void init_logging(const std::string& level, bool json);
void init_logging(const logging_options& options);

// Readiness lines ("listening on HOST:PORT") are a contract with scripts,
// tests and the supervisor: they go out at info, or at the logger's own
// level when that is higher, so --log-level warn does not hide them.
inline spdlog::level::level_enum readiness_level(const spdlog::logger& logger) {
  return std::max(spdlog::level::info, logger.level());
}

// Appends `s` as the inside of a JSON string (RFC 8259 §7: quote,
// backslash and control characters escaped).
void append_json_escaped(std::string& out, std::string_view s);

// The formatter of --log-format json (exposed for tests).
std::unique_ptr<spdlog::formatter> json_formatter();

// A logger named after a component ("gateway", "worker", ...).
std::shared_ptr<spdlog::logger> component_logger(const std::string& component);

}  // namespace fg
