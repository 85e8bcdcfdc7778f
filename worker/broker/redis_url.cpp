#include "worker/broker/redis_url.hpp"

#include <charconv>
#include <stdexcept>

#include "common/redact.hpp"

namespace fg::worker {

namespace {

[[noreturn]] void bad(const std::string& why) { throw std::invalid_argument("--redis: " + why); }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s, const char* what) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    const int hi = i + 1 < s.size() ? hex_digit(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_digit(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) bad(std::string("bad percent-encoding in the ") + what);
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

template <class Int>
Int parse_number(std::string_view s, Int max, const std::string& what) {
  Int v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || s.front() == '-' || ec != std::errc{} || end != s.data() + s.size() || v > max)
    bad(what + " '" + std::string(s) + "' is not a number from 0 to " + std::to_string(max));
  return v;
}

int parse_db(std::string_view s) { return parse_number<int>(s, 1'000'000, "db"); }

// "[user]:password", or a bare "user" when the password comes from a file.
void parse_userinfo(std::string_view info, redis_endpoint& ep, bool password_elsewhere) {
  const auto colon = info.find(':');
  if (colon == std::string_view::npos && password_elsewhere) {
    ep.user = percent_decode(info, "user");
    return;
  }
  if (colon == std::string_view::npos)
    bad("credentials need a password: use redis://:PASSWORD@host or redis://USER:PASSWORD@host");
  ep.user = percent_decode(info.substr(0, colon), "user");
  ep.password = percent_decode(info.substr(colon + 1), "password");
  if (ep.password.empty()) bad("empty password after ':' (omit the credentials for no AUTH)");
}

redis_endpoint parse_tcp(std::string_view rest, bool password_elsewhere) {
  redis_endpoint ep;
  // The authority ends at the first '/' (db), '?' or '#'; the password may
  // hold none of those unencoded, but may hold '@': the last '@' counts.
  const auto path_at = rest.find_first_of("/?#", rest.rfind('@') == std::string_view::npos ? 0 : rest.rfind('@'));
  std::string_view authority = rest.substr(0, path_at);
  std::string_view path = path_at == std::string_view::npos ? std::string_view{} : rest.substr(path_at);

  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    parse_userinfo(authority.substr(0, at), ep, password_elsewhere);
    authority = authority.substr(at + 1);
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) bad("unterminated '[' in the host");
    ep.host = std::string(authority.substr(1, close - 1));
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') bad("expected ':port' after ']'");
      port = after.substr(1);
      if (port.empty()) bad("empty port");
    }
  } else {
    const auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      authority = authority.substr(0, colon);
      if (port.empty()) bad("empty port");
    }
    ep.host = std::string(authority);
  }
  if (ep.host.empty()) bad("no host (expected redis://host:port)");
  if (!port.empty()) {
    ep.port = parse_number<std::uint16_t>(port, 65535, "port");
    if (ep.port == 0) bad("port 0 is not a port");
  }

  if (!path.empty()) {
    if (path.front() != '/')
      bad("unexpected '" + std::string(path) + "' after the host (query strings are for unix://)");
    const auto db = path.substr(1);
    if (!db.empty()) ep.db = parse_db(db);
  }
  return ep;
}

redis_endpoint parse_unix(std::string_view rest, bool password_elsewhere) {
  redis_endpoint ep;
  // unix:///path: the authority is empty, the path absolute.
  if (rest.empty() || rest.front() != '/') bad("expected unix:///absolute/path");
  const auto q = rest.find('?');
  ep.unix_path = std::string(rest.substr(0, q));
  if (ep.unix_path.size() < 2) bad("empty socket path");
  if (q == std::string_view::npos) return ep;
  std::string_view query = rest.substr(q + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = item.find('=');
    const auto key = item.substr(0, eq);
    const auto value = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    if (key == "db") {
      ep.db = parse_db(value);
    } else if (key == "user") {
      ep.user = percent_decode(value, "user");
    } else if (key == "password") {
      ep.password = percent_decode(value, "password");
    } else {
      bad("unknown parameter '" + std::string(key) + "' (known: db, user, password)");
    }
  }
  if (!ep.user.empty() && ep.password.empty() && !password_elsewhere) bad("user given without a password");
  return ep;
}

redis_endpoint parse_any(std::string_view url, bool password_elsewhere) {
  constexpr std::string_view tcp = "redis://", unix_scheme = "unix://";
  if (url.empty()) bad("empty URL");
  if (url.starts_with("rediss://")) bad("TLS (rediss://) is not supported");
  if (url.starts_with(tcp)) return parse_tcp(url.substr(tcp.size()), password_elsewhere);
  if (url.starts_with(unix_scheme)) return parse_unix(url.substr(unix_scheme.size()), password_elsewhere);
  const auto scheme_end = url.find("://");
  if (scheme_end != std::string_view::npos)
    bad("unsupported scheme '" + std::string(url.substr(0, scheme_end)) + "' (use redis:// or unix://)");
  bad("expected redis://host:port or unix:///path");
}

}  // namespace

// The URL it was parsed from, in canonical form, with the password shown
// as fg::redacted: where the worker connects and as whom, never the secret.
std::string redis_endpoint::describe() const {
  const std::string secret = password.empty() ? std::string() : std::string(fg::redacted);
  if (is_unix()) {
    std::string out = "unix://" + unix_path;
    char sep = '?';
    const auto param = [&](std::string_view key, const std::string& value) {
      if (value.empty()) return;
      out.append(1, sep).append(key).append("=").append(value);
      sep = '&';
    };
    param("db", db != 0 ? std::to_string(db) : std::string());
    param("user", user);
    param("password", secret);
    return out;
  }
  // append(), not operator+ chains: GCC 12 reports a false -Wrestrict on those.
  std::string out = "redis://";
  if (!user.empty() || !secret.empty()) {
    out.append(user);
    if (!secret.empty()) out.append(":").append(secret);
    out.append("@");
  }
  const bool v6 = host.find(':') != std::string::npos;
  out.append(v6 ? "[" : "").append(host).append(v6 ? "]" : "").append(":").append(std::to_string(port));
  if (db != 0) out.append("/").append(std::to_string(db));
  return out;
}

redis_endpoint parse_redis_url(std::string_view url) { return parse_any(url, false); }

redis_endpoint parse_redis_url(std::string_view url, std::string password) {
  auto ep = parse_any(url, true);
  if (!ep.password.empty()) bad("the URL holds a password and --redis-password-file gives one: keep only the file");
  ep.password = std::move(password);
  return ep;
}

std::vector<redis_endpoint> parse_cluster_seeds(std::string_view list, const std::optional<std::string>& password) {
  std::vector<redis_endpoint> seeds;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) throw std::invalid_argument("--redis-cluster: an empty seed in the list");
    const std::string url =
        item.find("://") == std::string_view::npos ? "redis://" + std::string(item) : std::string(item);
    redis_endpoint e = password ? parse_redis_url(url, *password) : parse_redis_url(url);
    if (e.is_unix()) throw std::invalid_argument("--redis-cluster: seeds are HOST:PORT, not Unix sockets");
    if (e.db != 0) throw std::invalid_argument("--redis-cluster: a Redis Cluster has only db 0");
    seeds.push_back(std::move(e));
  }
  if (seeds.empty()) throw std::invalid_argument("--redis-cluster: no seed node (HOST:PORT[,HOST:PORT...])");
  return seeds;
}

}  // namespace fg::worker
