// How every framegate binary turns a bad command line into one clear line.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

#include <string>

#include <CLI/CLI.hpp>

#include "common/config_error.hpp"
#include "common/logging.hpp"

namespace fg {

// Runs `parse` (CLI11's parse plus the program's own checks). --help prints
// the usage and --version the version, both exiting 0; any error prints
// "<program>: <reason>" on stderr and exits config_error_exit (2), so a
// supervisor can tell a configuration mistake (not worth a restart) from a
// crash.
template <class Fn>
void parse_or_exit(CLI::App& app, const char* program, Fn&& parse) {
  try {
    parse();
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    std::exit(0);
  } catch (const CLI::CallForVersion& e) {
    std::printf("%s\n", e.what());
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    std::exit(config_error_exit);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    std::exit(config_error_exit);
  }
}

// Adds --log-level and --log-format (and their FRAMEGATE_* variables).
inline void add_logging_options(CLI::App& app, logging_options& options, const std::string& note = "") {
  app.add_option("--log-level", options.level, "trace, debug, info, warn, error or off" + note)
      ->envname("FRAMEGATE_LOG_LEVEL")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--log-format", options.format, "text, or json: one JSON object per line" + note)
      ->envname("FRAMEGATE_LOG_FORMAT")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
}

}  // namespace fg
