// Resolves host names without holding the loop, and without holding the
// process when it stops.
//
// getaddrinfo blocks, for as long as the DNS takes to answer or time out
// (10 s with glibc's defaults), and cannot be cancelled. hiredis calls it
// inside redisAsyncConnect, on the worker's loop; Asio's resolver calls it
// on one thread of its own that the io_context joins when it is destroyed,
// so a worker stopped during a DNS outage waited for the lookup, and
// lookups queued behind a hung one. Here each lookup runs on a detached
// thread of its own and hands its answer to the loop, unless the resolver
// is gone by then; a process that exits leaves such a thread behind.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

namespace fg::worker {

class host_resolver {
 public:
  // On the loop: the addresses (in getaddrinfo's order), or why there are none.
  using done_fn = std::function<void(std::vector<boost::asio::ip::address> addresses, std::string error)>;

  explicit host_resolver(boost::asio::io_context& io);
  // Answers still on their way are dropped.
  ~host_resolver();
  host_resolver(const host_resolver&) = delete;
  host_resolver& operator=(const host_resolver&) = delete;

  void resolve(const std::string& host, std::uint16_t port, done_fn done);

 private:
  struct channel;
  std::shared_ptr<channel> channel_;
};

}  // namespace fg::worker
