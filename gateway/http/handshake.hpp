// The opening handshake (RFC 6455 §4.2) as a pure function: a parsed
// request header in, a verdict out. Every refusal carries the HTTP status
// the RFC names and one line that tells the client what was wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http/message.hpp>

#include "gateway/ws/deflate_options.hpp"

namespace fg::http {

struct handshake_options {
  std::vector<std::string> allowed_origins;  // empty: any Origin
  std::vector<std::string> subprotocols;     // supported, e.g. {"chat", "superchat"}
  ws::deflate_options deflate{};             // permessage-deflate (RFC 7692), off by default
};

struct handshake_verdict {
  unsigned status = 101;         // 101 accepts; anything else refuses
  std::string_view reason;       // one line, for refusals
  std::string accept_key;        // Sec-WebSocket-Accept, when accepted
  std::string subprotocol;       // selected subprotocol, may be empty
  ws::deflate_params deflate{};  // negotiated permessage-deflate, if enabled
  std::string extensions;        // Sec-WebSocket-Extensions of the response, may be empty
  [[nodiscard]] bool accepted() const noexcept { return status == 101; }
};

handshake_verdict evaluate_handshake(const boost::beast::http::request_header<>& req, const handshake_options& opt);

// base64(SHA-1(key + RFC 6455 GUID)), RFC 6455 §4.2.2 step 5.
std::string make_accept_key(std::string_view client_key);

// True if `list` (a comma-separated header value) holds `token`, ignoring
// case and optional white space (RFC 7230 §7).
bool header_has_token(std::string_view list, std::string_view token);

// The 101 response, ready to write.
std::string accept_response(const handshake_verdict& v);

// A refusal: status line, Content-Type text/plain, Connection: close, the
// headers a status requires (426: Sec-WebSocket-Version / Upgrade;
// 405: Allow), Retry-After when `retry_after_s` is not 0 (RFC 9110
// §10.2.3, with 429 or 503), `extra_headers` (whole "Name: value\r\n"
// lines) and a one-line body.
std::string refusal_response(unsigned status, std::string_view reason, std::uint64_t retry_after_s = 0,
                             std::string_view extra_headers = {});

// The challenge of a 401 (RFC 6750 §3): a request that presented a token
// gets error="invalid_token" with the reason; one without gets none.
std::string bearer_challenge(std::string_view reason, bool token_presented);

}  // namespace fg::http
