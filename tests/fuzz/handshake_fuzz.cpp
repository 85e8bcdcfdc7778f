// Fuzzes the opening handshake from raw bytes: Beast parses the request
// header (with a header size limit, as the server does), then the verdict
// and the response built from it must be well-formed. Never crash. With
// permessage-deflate on, an accepted extension must be answered with a
// header that parses back, within the configured window, and that would
// itself be a valid offer (the negotiation's own grammar). The headers
// forwarded to workers come out once per name, lower-case, repeats joined.
// The token found in the request (its Authorization header or its query,
// and the whole input taken as a query) is a piece of that input, and the
// query handed on to workers never carries a token find_token would take.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "gateway/auth/token_source.hpp"
#include "gateway/http/forwarded_headers.hpp"
#include "gateway/http/handshake.hpp"
#include "gateway/ws/deflate_negotiation.hpp"
#include "tests/fuzz/check.hpp"

namespace {
using fg::fuzz::check;

fg::http::handshake_options with_deflate() {
  fg::http::handshake_options o;
  o.deflate.enabled = true;
  o.deflate.server_takeover = o.deflate.client_takeover = true;
  o.deflate.max_window_bits = 10;
  return o;
}

bool within(std::string_view part, std::string_view whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

void check_token_source(std::string_view authorization, std::string_view query) {
  if (const auto token = fg::auth::find_token(authorization, query))
    check(within(*token, authorization) || within(*token, query));
  const std::string handed_on = fg::auth::without_token_param(query);
  check(handed_on.size() <= query.size());
  check(!fg::auth::find_token({}, handed_on).has_value());
}

void check_extension(const fg::http::handshake_verdict& v, const fg::http::handshake_options& opt) {
  if (!v.deflate.enabled) {
    check(v.extensions.empty());
    return;
  }
  check(opt.deflate.enabled);
  std::vector<fg::ws::extension_offer> parsed;
  check(fg::ws::parse_extensions(v.extensions, parsed));
  check(parsed.size() == 1 && parsed[0].name == "permessage-deflate");
  fg::ws::deflate_offer as_offer;
  check(fg::ws::parse_deflate_offer(parsed[0].params, as_offer) == fg::ws::offer_error::none);
  check(v.deflate.server_window_bits >= 8 && v.deflate.server_window_bits <= opt.deflate.max_window_bits);
  check(v.deflate.client_window_bits >= 8 && v.deflate.client_window_bits <= 15);
  if (v.deflate.client_takeover) check(v.deflate.client_window_bits <= opt.deflate.max_window_bits);
  check(fg::http::accept_response(v).find("\r\nSec-WebSocket-Extensions: " + v.extensions + "\r\n") !=
        std::string::npos);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace http = boost::beast::http;
  http::request_parser<http::empty_body> parser;
  parser.header_limit(8 * 1024);
  parser.eager(false);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (!parser.is_header_done()) return 0;

  check_token_source({}, {reinterpret_cast<const char*>(data), size});
  const auto target = parser.get().target();
  const auto question = target.find('?');
  const auto authorization = parser.get()[http::field::authorization];
  check_token_source({authorization.data(), authorization.size()},
                     question == std::string_view::npos
                         ? std::string_view{}
                         : std::string_view{target.data(), target.size()}.substr(question + 1));

  static const std::vector<std::string> extra{"x-team", "host"};
  const auto forwarded = fg::http::forwarded_headers(parser.get().base(), extra);
  for (std::size_t i = 0; i < forwarded.size(); ++i) {
    const auto& name = forwarded[i].first;
    check(name == "origin" || name == "cookie" || name == "x-team" || name == "host");
    for (std::size_t j = 0; j < i; ++j) check(forwarded[j].first != name);
  }

  static const fg::http::handshake_options plain{};
  static const fg::http::handshake_options strict{{"https://app.example", "http://localhost:8080"},
                                                  {"chat", "v2.json"}};
  static const fg::http::handshake_options deflate = with_deflate();
  for (const auto* opt : {&plain, &strict, &deflate}) {
    const auto v = fg::http::evaluate_handshake(parser.get().base(), *opt);
    if (v.accepted()) {
      check_extension(v, *opt);
      check(v.accept_key.size() == 28);
      check(v.subprotocol.empty() || v.subprotocol == "chat" || v.subprotocol == "v2.json");
      const std::string response = fg::http::accept_response(v);
      check(response.find(v.accept_key) != std::string::npos);
    } else {
      check(v.status == 400 || v.status == 403 || v.status == 405 || v.status == 426);
      check(!v.reason.empty());
      check(v.accept_key.empty());
      const std::string response = fg::http::refusal_response(v.status, v.reason);
      check(response.compare(0, 9, "HTTP/1.1 ") == 0);
    }
  }
  return 0;
}
