#include "common/logging.hpp"

#include <stdexcept>

#include <spdlog/sinks/stdout_sinks.h>

namespace fg {

namespace {
spdlog::level::level_enum g_level = spdlog::level::info;
bool g_json = false;

void apply_format(spdlog::logger& logger) {
  if (g_json)
    logger.set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","component":"%n","msg":"%v"})");
  else
    logger.set_pattern("%Y-%m-%d %H:%M:%S.%e [%l] [%n] %v");
  logger.set_level(g_level);
  logger.flush_on(spdlog::level::info);
}
}  // namespace

void init_logging(const std::string& level, bool json) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off")
    throw std::invalid_argument("unknown log level '" + level + "' (trace, debug, info, warn, error, off)");
  g_level = parsed;
  g_json = json;
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { apply_format(*l); });
}

std::shared_ptr<spdlog::logger> component_logger(const std::string& component) {
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = spdlog::stderr_logger_mt(component);
  apply_format(*logger);
  return logger;
}

}  // namespace fg
