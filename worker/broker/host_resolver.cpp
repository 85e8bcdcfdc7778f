#include "worker/broker/host_resolver.hpp"

#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include <netdb.h>
#include <sys/socket.h>

#include <boost/asio/post.hpp>

namespace fg::worker {

namespace asio = boost::asio;

// Shared by the resolver and its lookups: a lookup posts its answer only
// while the resolver is there (the io_context outlives the resolver).
struct host_resolver::channel {
  std::mutex m;
  bool open = true;
  asio::io_context& io;
  explicit channel(asio::io_context& context) : io(context) {}
};

host_resolver::host_resolver(asio::io_context& io) : channel_(std::make_shared<channel>(io)) {}

host_resolver::~host_resolver() {
  const std::lock_guard lock(channel_->m);
  channel_->open = false;
}

namespace {

std::pair<std::vector<asio::ip::address>, std::string> lookup(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) return {{}, ::gai_strerror(rc)};
  std::vector<asio::ip::address> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      asio::ip::address_v4::bytes_type b;
      static_assert(sizeof b == sizeof in->sin_addr);
      std::memcpy(b.data(), &in->sin_addr, b.size());
      addresses.emplace_back(asio::ip::address_v4(b));
    } else if (a->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      asio::ip::address_v6::bytes_type b;
      static_assert(sizeof b == sizeof in6->sin6_addr);
      std::memcpy(b.data(), &in6->sin6_addr, b.size());
      addresses.emplace_back(asio::ip::address_v6(b, in6->sin6_scope_id));
    }
  }
  ::freeaddrinfo(found);
  std::string error = addresses.empty() ? "no address" : "";
  return {std::move(addresses), std::move(error)};
}

}  // namespace

void host_resolver::resolve(const std::string& host, std::uint16_t port, done_fn done) {
  auto answer = [ch = channel_, done](std::vector<asio::ip::address> addresses, std::string error) {
    const std::lock_guard lock(ch->m);
    if (!ch->open) return;
    asio::post(ch->io, [ch, done, addresses = std::move(addresses), error = std::move(error)]() mutable {
      {
        // Closed since: the resolver's owner is gone.
        const std::lock_guard again(ch->m);
        if (!ch->open) return;
      }
      done(std::move(addresses), std::move(error));
    });
  };
  try {
    std::thread([host, port, answer] {
      auto [addresses, error] = lookup(host, port);
      answer(std::move(addresses), std::move(error));
    }).detach();
  } catch (const std::system_error& e) {
    answer({}, std::string("no thread to resolve on: ") + e.what());
  }
}

}  // namespace fg::worker
