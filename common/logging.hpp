// Logging set-up shared by every framegate process: spdlog to stderr, one
// named logger per component, plain text or one JSON object per line.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace fg {

// Configures the default sink; throws std::invalid_argument on an unknown level.
void init_logging(const std::string& level, bool json);

// A logger named after a component ("gateway", "worker", ...).
std::shared_ptr<spdlog::logger> component_logger(const std::string& component);

}  // namespace fg
