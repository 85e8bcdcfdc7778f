// How every framegate binary turns a bad command line into one clear line.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>

#include <CLI/CLI.hpp>

namespace fg {

// Runs `parse` (CLI11's parse plus the program's own checks). --help prints
// the usage and --version the version, both exiting 0; any error prints
// "<program>: <reason>" on stderr and exits 2, so a supervisor can tell a
// configuration mistake (not worth a restart) from a crash.
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
    std::exit(2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    std::exit(2);
  }
}

}  // namespace fg
