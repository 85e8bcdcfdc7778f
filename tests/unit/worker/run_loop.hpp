// Drives a test's io_context in small steps until a condition holds.
#pragma once

#include <chrono>
#include <functional>

#include <boost/asio/io_context.hpp>

namespace fg::test {

// Runs `io` until `done` or `limit`; false on timeout.
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace fg::test
