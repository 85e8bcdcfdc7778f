#include "handshake.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "sha1_base64.hpp"

namespace loadgen {

namespace {

constexpr std::string_view ws_guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool contains_token(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    if (iequals(trim(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

handshake_request make_handshake_request(std::string_view host_port, std::string_view path, std::uint64_t random_a,
                                         std::uint64_t random_b, std::string_view extensions) {
  std::uint8_t nonce[16];
  std::memcpy(nonce, &random_a, 8);
  std::memcpy(nonce + 8, &random_b, 8);
  const std::string key = base64_encode(nonce, sizeof nonce);
  const auto digest = sha1(key + std::string(ws_guid));
  handshake_request r;
  r.expected_accept = base64_encode(digest.data(), digest.size());
  r.text.reserve(256);
  r.text.append("GET ").append(path).append(" HTTP/1.1\r\nHost: ").append(host_port);
  r.text.append("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ").append(key);
  r.text.append("\r\nSec-WebSocket-Version: 13\r\n");
  if (!extensions.empty()) r.text.append("Sec-WebSocket-Extensions: ").append(extensions).append("\r\n");
  r.text.append("\r\n");
  return r;
}

handshake_result check_handshake_response(const char* data, std::size_t len, std::string_view expected_accept,
                                          std::size_t& header_len, std::string& reason, std::string& extensions) {
  const std::string_view all(data, len);
  const auto end = all.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (len > 16384) {
      reason = "response header block over 16 KiB";
      return handshake_result::rejected;
    }
    return handshake_result::need_more;
  }
  header_len = end + 4;
  std::string_view block = all.substr(0, end + 2);
  const auto first_eol = block.find("\r\n");
  const std::string_view status_line = block.substr(0, first_eol);
  if (status_line.size() < 12 || status_line.substr(0, 9) != "HTTP/1.1 " || status_line.substr(9, 3) != "101") {
    reason = "status: " + std::string(status_line);
    return handshake_result::rejected;
  }
  block.remove_prefix(first_eol + 2);
  bool upgrade_ok = false, connection_ok = false, accept_ok = false;
  while (!block.empty()) {
    const auto eol = block.find("\r\n");
    const std::string_view line = block.substr(0, eol);
    block.remove_prefix(eol == std::string_view::npos ? block.size() : eol + 2);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (iequals(name, "upgrade"))
      upgrade_ok = iequals(value, "websocket");
    else if (iequals(name, "connection"))
      connection_ok = contains_token(value, "upgrade");
    else if (iequals(name, "sec-websocket-accept"))
      accept_ok = value == expected_accept;
    else if (iequals(name, "sec-websocket-extensions"))
      extensions.assign(value.data(), value.size());
  }
  if (!upgrade_ok)
    reason = "missing Upgrade: websocket";
  else if (!connection_ok)
    reason = "missing Connection: upgrade";
  else if (!accept_ok)
    reason = "wrong or missing Sec-WebSocket-Accept";
  else
    return handshake_result::accepted;
  return handshake_result::rejected;
}

}  // namespace loadgen
