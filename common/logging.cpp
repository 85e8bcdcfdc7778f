#include "common/logging.hpp"

#include <cstdio>
#include <stdexcept>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace fg {

namespace {
spdlog::level::level_enum g_level = spdlog::level::info;
bool g_json = false;

// Works for std::string and spdlog's memory buffer alike.
template <class Out>
void put(Out& dest, std::string_view s) {
  dest.append(s.data(), s.data() + s.size());
}

template <class Out>
void escape_into(std::string_view s, Out& dest) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': put(dest, "\\\""); break;
      case '\\': put(dest, "\\\\"); break;
      case '\n': put(dest, "\\n"); break;
      case '\r': put(dest, "\\r"); break;
      case '\t': put(dest, "\\t"); break;
      default:
        if (c < 0x20) {
          char esc[8];
          const int n = std::snprintf(esc, sizeof esc, "\\u%04x", c);
          put(dest, std::string_view(esc, static_cast<std::size_t>(n)));
        } else {
          dest.push_back(ch);
        }
    }
  }
}

// %* in the JSON pattern: the message as the inside of a JSON string, so
// a message quoting a client's bytes cannot break the line.
class json_escaped_message final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    escape_into(std::string_view(msg.payload.data(), msg.payload.size()), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<json_escaped_message>(); }
};

void apply_format(spdlog::logger& logger) {
  if (g_json) {
    logger.set_formatter(json_formatter());
  } else {
    logger.set_pattern("%Y-%m-%d %H:%M:%S.%e [%l] [%n] %v");
  }
  logger.set_level(g_level);
  logger.flush_on(spdlog::level::info);
}
}  // namespace

void append_json_escaped(std::string& out, std::string_view s) { escape_into(s, out); }

std::unique_ptr<spdlog::formatter> json_formatter() {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<json_escaped_message>('*').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","component":"%n","pid":%P,"msg":"%*"})");
  return f;
}

void init_logging(const std::string& level, bool json) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off")
    throw std::invalid_argument("unknown log level '" + level + "' (trace, debug, info, warn, error, off)");
  g_level = parsed;
  g_json = json;
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { apply_format(*l); });
}

void init_logging(const logging_options& options) { init_logging(options.level, options.format == "json"); }

std::shared_ptr<spdlog::logger> component_logger(const std::string& component) {
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = spdlog::stderr_logger_mt(component);
  apply_format(*logger);
  return logger;
}

}  // namespace fg
