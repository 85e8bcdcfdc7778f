#include "gateway/http/handshake.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/core/detail/sha1.hpp>
#include <boost/beast/http/status.hpp>

#include "gateway/ws/deflate_negotiation.hpp"

namespace fg::http {

namespace beast = boost::beast;
using field = beast::http::field;

namespace {

constexpr std::string_view ws_guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

template <class Fn>
void for_each_token(std::string_view list, Fn&& fn) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto token = trim(list.substr(0, comma));
    if (!token.empty() && fn(token)) return;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// Every instance of a header that may be repeated, joined as one list.
bool any_header_has_token(const beast::http::request_header<>& req, field f, std::string_view token) {
  auto range = req.equal_range(f);
  return std::any_of(range.first, range.second, [&](const auto& h) {
    return header_has_token({h.value().data(), h.value().size()}, token);
  });
}

bool key_is_valid(std::string_view key) {
  key = trim(key);
  // 16 bytes encode to exactly 24 base64 characters ending in "==".
  if (key.size() != 24 || key.substr(22) != "==") return false;
  std::array<unsigned char, 18> decoded{};
  // Beast's decoder stops at the padding, so it reads the 22 data characters.
  const auto [written, read] = beast::detail::base64::decode(decoded.data(), key.data(), 22);
  return written == 16 && read == 22;
}

}  // namespace

bool header_has_token(std::string_view list, std::string_view token) {
  bool found = false;
  for_each_token(list, [&](std::string_view t) { return found = iequals(t, token); });
  return found;
}

std::string make_accept_key(std::string_view client_key) {
  beast::detail::sha1_context ctx;
  beast::detail::init(ctx);
  beast::detail::update(ctx, client_key.data(), client_key.size());
  beast::detail::update(ctx, ws_guid.data(), ws_guid.size());
  std::array<unsigned char, beast::detail::sha1_context::digest_size> digest{};
  beast::detail::finish(ctx, digest.data());
  std::string out(beast::detail::base64::encoded_size(digest.size()), '\0');
  out.resize(beast::detail::base64::encode(out.data(), digest.data(), digest.size()));
  return out;
}

handshake_verdict evaluate_handshake(const beast::http::request_header<>& req, const handshake_options& opt) {
  handshake_verdict v;
  auto refuse = [&](unsigned status, std::string_view reason) {
    v.status = status;
    v.reason = reason;
    return v;
  };

  if (req.method() != beast::http::verb::get) return refuse(405, "only GET can be upgraded to a WebSocket");
  if (req.version() < 11) return refuse(400, "HTTP/1.1 or later is required");
  if (req.find(field::host) == req.end()) return refuse(400, "missing Host header");

  const bool wants_upgrade = any_header_has_token(req, field::connection, "upgrade");
  const bool names_websocket = any_header_has_token(req, field::upgrade, "websocket");
  if (!wants_upgrade && req.find(field::upgrade) == req.end())
    return refuse(426, "this endpoint speaks WebSocket only: send Upgrade: websocket");
  if (!names_websocket) return refuse(400, "Upgrade header must name websocket");
  if (!wants_upgrade) return refuse(400, "Connection header must contain upgrade");

  const auto version = req.find(field::sec_websocket_version);
  if (version == req.end() || trim({version->value().data(), version->value().size()}) != "13")
    return refuse(426, "Sec-WebSocket-Version must be 13");

  const auto key = req.find(field::sec_websocket_key);
  if (key == req.end() || req.count(field::sec_websocket_key) != 1 ||
      !key_is_valid({key->value().data(), key->value().size()}))
    return refuse(400, "Sec-WebSocket-Key must be base64 of 16 bytes");

  // RFC 6454 §7.3: a user agent sends at most one Origin. Two copies are a
  // forgery, and the check below and an app reading the forwarded value
  // could each judge a different one.
  if (req.count(field::origin) > 1) return refuse(403, "more than one Origin header");
  if (!opt.allowed_origins.empty()) {
    const auto origin = req.find(field::origin);
    const std::string_view value =
        origin == req.end() ? std::string_view{} : std::string_view{origin->value().data(), origin->value().size()};
    const bool allowed = std::any_of(opt.allowed_origins.begin(), opt.allowed_origins.end(),
                                     [&](const std::string& o) { return iequals(o, trim(value)); });
    if (!allowed) return refuse(403, "Origin not allowed");
  }

  if (!opt.subprotocols.empty()) {
    auto range = req.equal_range(field::sec_websocket_protocol);
    for (auto it = range.first; it != range.second && v.subprotocol.empty(); ++it) {
      for_each_token({it->value().data(), it->value().size()}, [&](std::string_view offered) {
        const auto match = std::find(opt.subprotocols.begin(), opt.subprotocols.end(), offered);
        if (match != opt.subprotocols.end()) v.subprotocol = *match;
        return !v.subprotocol.empty();
      });
    }
  }

  // The extension header is only read when an extension is enabled, so a
  // gateway without --deflate answers exactly as before.
  if (opt.deflate.enabled) {
    std::vector<std::string_view> offers;
    auto range = req.equal_range(field::sec_websocket_extensions);
    for (auto it = range.first; it != range.second; ++it) offers.emplace_back(it->value().data(), it->value().size());
    auto n = ws::negotiate_deflate(offers, opt.deflate);
    // RFC 6455 §4.2.1 / §9.1: a header outside the grammar is a malformed handshake.
    if (n.status == ws::negotiation_status::malformed_header)
      return refuse(400, "malformed Sec-WebSocket-Extensions header");
    if (n.status == ws::negotiation_status::accepted) {
      v.deflate = n.agreement.params;
      v.extensions = std::move(n.agreement.response);
    }
  }

  v.accept_key = make_accept_key(trim({key->value().data(), key->value().size()}));
  return v;
}

std::string accept_response(const handshake_verdict& v) {
  std::string out;
  out.reserve(160);
  out += "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ";
  out += v.accept_key;
  if (!v.subprotocol.empty()) {
    out += "\r\nSec-WebSocket-Protocol: ";
    out += v.subprotocol;
  }
  if (!v.extensions.empty()) {
    out += "\r\nSec-WebSocket-Extensions: ";
    out += v.extensions;
  }
  out += "\r\n\r\n";
  return out;
}

std::string refusal_response(unsigned status, std::string_view reason, std::uint64_t retry_after_s,
                             std::string_view extra_headers) {
  const auto text = beast::http::obsolete_reason(beast::http::int_to_status(status));
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(text.data(), text.size()) + "\r\n";
  if (status == 426) out += "Sec-WebSocket-Version: 13\r\nUpgrade: websocket\r\n";
  if (status == 405) out += "Allow: GET\r\n";
  if (retry_after_s != 0) out += "Retry-After: " + std::to_string(retry_after_s) + "\r\n";
  out += extra_headers;
  out += "Content-Type: text/plain\r\nConnection: close\r\nContent-Length: " + std::to_string(reason.size() + 1) +
         "\r\n\r\n";
  out += reason;
  out += "\n";
  return out;
}

std::string bearer_challenge(std::string_view reason, bool token_presented) {
  std::string out = "WWW-Authenticate: Bearer realm=\"framegate\"";
  // The reasons are fixed texts without quotes or backslashes (RFC 9110 §5.6.4 quoted-string).
  if (token_presented) out += ", error=\"invalid_token\", error_description=\"" + std::string(reason) + "\"";
  return out + "\r\n";
}

}  // namespace fg::http
