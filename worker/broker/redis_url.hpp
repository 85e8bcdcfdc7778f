// Where the Redis broker connects, parsed from one URL:
//
//   redis://[[user]:password@]host[:port][/db]     (port 6379, db 0 by default)
//   unix:///path/to/redis.sock[?db=N][&user=U][&password=P]
//
// IPv6 hosts go in brackets (redis://[::1]:6379). User and password may be
// percent-encoded (a password holding '@' or '/'). TLS (rediss://) is not
// supported. Note that Redis pub/sub channels ignore the db: clusters
// sharing one Redis are kept apart by the channel prefix, not by SELECT.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fg::worker {

struct redis_endpoint {
  std::string host;  // empty for a Unix socket
  std::uint16_t port = 6379;
  std::string unix_path;  // set for unix:// URLs
  std::string user;       // AUTH user (Redis 6 ACL); empty: AUTH with the password only
  std::string password;   // empty: no AUTH
  int db = 0;             // SELECTed when not 0

  [[nodiscard]] bool is_unix() const noexcept { return !unix_path.empty(); }
  // For logs: the URL with the password as "***" (fg::redact_url's form).
  [[nodiscard]] std::string describe() const;
};

// Throws std::invalid_argument with a one-line message (which never
// repeats the password) when `url` is not one of the forms above.
redis_endpoint parse_redis_url(std::string_view url);

// The same, with the password read from --redis-password-file: the URL may
// then name a user without a password (redis://USER@host, unix:///s?user=U)
// and must not hold a password of its own.
redis_endpoint parse_redis_url(std::string_view url, std::string password);

// The seed nodes of a Redis Cluster: "HOST:PORT[,HOST:PORT...]", each item
// also accepted as a redis:// URL (a user, a password). `password` (from
// --redis-password-file) applies to every seed. Throws
// std::invalid_argument for an empty list, a Unix socket or a db other
// than 0 (a cluster has only db 0).
std::vector<redis_endpoint> parse_cluster_seeds(std::string_view list, const std::optional<std::string>& password);

}  // namespace fg::worker
