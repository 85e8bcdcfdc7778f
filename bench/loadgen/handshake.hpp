#pragma once
// The client's opening handshake: the upgrade request, and the check of the
// server's answer (status 101 and the right Sec-WebSocket-Accept).
#include <cstdint>
#include <string>
#include <string_view>

namespace loadgen {

struct handshake_request {
  std::string text;             // bytes to send
  std::string expected_accept;  // what Sec-WebSocket-Accept must say
};

// `extensions`: a Sec-WebSocket-Extensions offer to send, or empty.
handshake_request make_handshake_request(std::string_view host_port, std::string_view path, std::uint64_t random_a,
                                         std::uint64_t random_b, std::string_view extensions = {});

enum class handshake_result { need_more, accepted, rejected };

// Looks for a complete response header block in data[0..len). On
// `accepted`, header_len is the number of bytes it took (frames may follow).
// On `rejected`, reason is set (status line or the missing piece). On
// `accepted`, extensions holds the Sec-WebSocket-Extensions value (or "").
handshake_result check_handshake_response(const char* data, std::size_t len, std::string_view expected_accept,
                                          std::size_t& header_len, std::string& reason, std::string& extensions);

}  // namespace loadgen
