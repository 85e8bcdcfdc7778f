// Fuzzes the opening handshake from raw bytes: Beast parses the request
// header (with a header size limit, as the server does), then the verdict
// and the response built from it must be well-formed. Never crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>

#include "gateway/http/handshake.hpp"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
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

  static const fg::http::handshake_options plain{};
  static const fg::http::handshake_options strict{{"https://app.example", "http://localhost:8080"},
                                                  {"chat", "v2.json"}};
  for (const auto* opt : {&plain, &strict}) {
    const auto v = fg::http::evaluate_handshake(parser.get().base(), *opt);
    if (v.accepted()) {
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
