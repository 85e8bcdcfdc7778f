#include "common/redact.hpp"

#include <array>
#include <cctype>

namespace fg {

namespace {

bool is_secret_key(std::string_view key) {
  static constexpr std::array<std::string_view, 4> secret_keys{"password", "pass", "token", "secret"};
  for (const auto candidate : secret_keys) {
    if (candidate.size() != key.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < key.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(key[i])) == candidate[i];
    if (same) return true;
  }
  return false;
}

// "a=1&password=x&b" -> "a=1&password=***&b".
void append_redacted_query(std::string& out, std::string_view query) {
  while (true) {
    const auto amp = query.find('&');
    const auto item = query.substr(0, amp);
    const auto eq = item.find('=');
    if (eq != std::string_view::npos && is_secret_key(item.substr(0, eq)))
      out.append(item.substr(0, eq + 1)).append(redacted);
    else
      out.append(item);
    if (amp == std::string_view::npos) return;
    out.push_back('&');
    query.remove_prefix(amp + 1);
  }
}

}  // namespace

std::string redact_url(std::string_view url) {
  std::string out;
  out.reserve(url.size() + redacted.size());
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    append_redacted_query(out, url);  // not a URL: at most key=value pairs to hide
    return out;
  }
  out.append(url.substr(0, scheme_end + 3));
  std::string_view rest = url.substr(scheme_end + 3);
  // The userinfo ends at the last '@' (an unencoded password may hold '@',
  // '/' or '?'), as worker/broker/redis_url.cpp reads it. An empty authority
  // (unix:///path) has none, whatever its query holds.
  if (const auto at = rest.rfind('@'); at != std::string_view::npos && !rest.starts_with('/')) {
    const auto userinfo = rest.substr(0, at);
    const auto colon = userinfo.find(':');
    if (colon != std::string_view::npos) out.append(userinfo.substr(0, colon + 1));
    out.append(redacted).append("@");
    rest.remove_prefix(at + 1);
  }
  const auto q = rest.find('?');
  out.append(rest.substr(0, q));
  if (q != std::string_view::npos) {
    out.push_back('?');
    append_redacted_query(out, rest.substr(q + 1));
  }
  return out;
}

}  // namespace fg
