#include "gateway/http/handshake.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <boost/beast/http/string_body.hpp>

#include "tests/unit/support/param_name.hpp"

namespace {

FG_PRINT_CASES_BY_NAME()

namespace http = boost::beast::http;
using fg::http::evaluate_handshake;
using fg::http::handshake_options;
using request = http::request_header<>;

// RFC 6455 §1.3's example.
constexpr const char* sample_key = "dGhlIHNhbXBsZSBub25jZQ==";
constexpr const char* sample_accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

request valid_request() {
  request req;
  req.method(http::verb::get);
  req.target("/chat");
  req.version(11);
  req.set(http::field::host, "server.example.com");
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::sec_websocket_key, sample_key);
  req.set(http::field::sec_websocket_version, "13");
  return req;
}

handshake_options origins(std::vector<std::string> allowed) { return {std::move(allowed), {}}; }

TEST(handshake, rfc_example_is_accepted) {
  const auto v = evaluate_handshake(valid_request(), {});
  EXPECT_TRUE(v.accepted());
  EXPECT_EQ(v.status, 101u);
  EXPECT_EQ(v.accept_key, sample_accept);
  EXPECT_TRUE(v.subprotocol.empty());
}

TEST(handshake, make_accept_key_matches_rfc_example) {
  EXPECT_EQ(fg::http::make_accept_key(sample_key), sample_accept);
  // RFC 6455 §4.1 does not give a second vector; this one is from the
  // Autobahn suite's key "x3JJHMbDL1EzLkh9GBhXDw==".
  EXPECT_EQ(fg::http::make_accept_key("x3JJHMbDL1EzLkh9GBhXDw=="), "HSmrc0sMlYUkAGmm5OPpG2HaGWk=");
}

// ---------------------------------------------------------------------------
// Refusals, one change from a valid request each.

struct refusal_case {
  std::string name;
  std::function<void(request&)> change;
  handshake_options options;
  unsigned status;
};

void set(request& r, http::field f, const char* value) { r.set(f, value); }

std::vector<refusal_case> refusal_cases() {
  using f = http::field;
  return {
      {"post", [](request& r) { r.method(http::verb::post); }, {}, 405},
      {"head", [](request& r) { r.method(http::verb::head); }, {}, 405},
      {"http_1_0", [](request& r) { r.version(10); }, {}, 400},
      {"no_host", [](request& r) { r.erase(f::host); }, {}, 400},
      {"plain_http_request",
       [](request& r) {
         r.erase(f::upgrade);
         r.erase(f::connection);
       },
       {},
       426},
      {"keep_alive_without_upgrade",
       [](request& r) {
         r.erase(f::upgrade);
         set(r, f::connection, "keep-alive");
       },
       {},
       426},
      {"upgrade_to_h2c", [](request& r) { set(r, f::upgrade, "h2c"); }, {}, 400},
      {"connection_upgrade_without_upgrade_header", [](request& r) { r.erase(f::upgrade); }, {}, 400},
      {"upgrade_without_connection", [](request& r) { r.erase(f::connection); }, {}, 400},
      {"connection_keep_alive_only", [](request& r) { set(r, f::connection, "keep-alive"); }, {}, 400},
      {"connection_upgrade_as_substring", [](request& r) { set(r, f::connection, "upgraded"); }, {}, 400},
      {"version_missing", [](request& r) { r.erase(f::sec_websocket_version); }, {}, 426},
      {"version_12", [](request& r) { set(r, f::sec_websocket_version, "12"); }, {}, 426},
      {"version_8", [](request& r) { set(r, f::sec_websocket_version, "8"); }, {}, 426},
      {"version_empty", [](request& r) { set(r, f::sec_websocket_version, ""); }, {}, 426},
      {"key_missing", [](request& r) { r.erase(f::sec_websocket_key); }, {}, 400},
      {"key_too_short", [](request& r) { set(r, f::sec_websocket_key, "dGhlIHNhbXBsZQ=="); }, {}, 400},
      {"key_too_long", [](request& r) { set(r, f::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZSE="); }, {}, 400},
      {"key_without_padding", [](request& r) { set(r, f::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQAA"); }, {}, 400},
      {"key_not_base64", [](request& r) { set(r, f::sec_websocket_key, "dGhlIHNhbXBsZ*Bub25jZQ=="); }, {}, 400},
      {"key_all_padding", [](request& r) { set(r, f::sec_websocket_key, "========================"); }, {}, 400},
      {"key_empty", [](request& r) { set(r, f::sec_websocket_key, ""); }, {}, 400},
      {"two_keys", [](request& r) { r.insert(f::sec_websocket_key, "AQIDBAUGBwgJCgsMDQ4PEA=="); }, {}, 400},
      {"origin_not_listed", [](request& r) { set(r, f::origin, "http://evil.example"); },
       origins({"http://good.example"}), 403},
      {"origin_missing_with_allow_list", [](request&) {}, origins({"http://good.example"}), 403},
      {"origin_prefix_of_listed", [](request& r) { set(r, f::origin, "http://good.example.evil"); },
       origins({"http://good.example"}), 403},
      // The first copy was judged while apps saw the last.
      {"two_origins_first_listed",
       [](request& r) {
         r.insert(f::origin, "http://good.example");
         r.insert(f::origin, "http://evil.example");
       },
       origins({"http://good.example"}), 403},
      {"two_origins_without_allow_list",
       [](request& r) {
         r.insert(f::origin, "http://a.example");
         r.insert(f::origin, "http://a.example");
       },
       {},
       403},
  };
}

class handshake_refusal : public ::testing::TestWithParam<refusal_case> {};

TEST_P(handshake_refusal, refused_with_status) {
  request req = valid_request();
  GetParam().change(req);
  const auto v = evaluate_handshake(req, GetParam().options);
  EXPECT_FALSE(v.accepted());
  EXPECT_EQ(v.status, GetParam().status) << v.reason;
  EXPECT_FALSE(v.reason.empty());
  EXPECT_TRUE(v.accept_key.empty());
}

INSTANTIATE_TEST_SUITE_P(cases, handshake_refusal, ::testing::ValuesIn(refusal_cases()), fg::test::param_name{});

// ---------------------------------------------------------------------------
// Variations a client may legitimately send.

struct accept_case {
  std::string name;
  std::function<void(request&)> change;
  handshake_options options;
};

std::vector<accept_case> accept_cases() {
  using f = http::field;
  return {
      {"connection_list", [](request& r) { set(r, f::connection, "keep-alive, Upgrade"); }, {}},
      {"connection_list_no_spaces", [](request& r) { set(r, f::connection, "keep-alive,upgrade"); }, {}},
      {"connection_tabs_and_case", [](request& r) { set(r, f::connection, "\tUPGRADE\t, close"); }, {}},
      {"connection_empty_elements", [](request& r) { set(r, f::connection, ", ,Upgrade,"); }, {}},
      {"connection_in_second_header",
       [](request& r) {
         set(r, f::connection, "keep-alive");
         r.insert(f::connection, "Upgrade");
       },
       {}},
      {"upgrade_mixed_case", [](request& r) { set(r, f::upgrade, "WebSocket"); }, {}},
      {"upgrade_list", [](request& r) { set(r, f::upgrade, "h2c, websocket"); }, {}},
      {"http_2_0", [](request& r) { r.version(20); }, {}},
      {"version_with_spaces", [](request& r) { set(r, f::sec_websocket_version, " 13 "); }, {}},
      {"origin_listed", [](request& r) { set(r, f::origin, "http://good.example"); },
       origins({"http://other.example", "http://good.example"})},
      {"origin_listed_other_case", [](request& r) { set(r, f::origin, "HTTP://Good.Example"); },
       origins({"http://good.example"})},
      {"origin_ignored_without_list", [](request& r) { set(r, f::origin, "http://anything.example"); }, {}},
  };
}

class handshake_accept : public ::testing::TestWithParam<accept_case> {};

TEST_P(handshake_accept, accepted) {
  request req = valid_request();
  GetParam().change(req);
  const auto v = evaluate_handshake(req, GetParam().options);
  EXPECT_TRUE(v.accepted()) << v.status << " " << v.reason;
  EXPECT_EQ(v.accept_key, sample_accept);
}

INSTANTIATE_TEST_SUITE_P(cases, handshake_accept, ::testing::ValuesIn(accept_cases()), fg::test::param_name{});

// ---------------------------------------------------------------------------
// Subprotocols: the client's order decides, among those the server supports.

struct subprotocol_case {
  std::string name;
  std::vector<std::string> offered;  // one header per element
  std::vector<std::string> supported;
  std::string selected;
};

class handshake_subprotocol : public ::testing::TestWithParam<subprotocol_case> {};

TEST_P(handshake_subprotocol, selects_first_supported_in_client_order) {
  request req = valid_request();
  for (const auto& h : GetParam().offered) req.insert(http::field::sec_websocket_protocol, h);
  const auto v = evaluate_handshake(req, {{}, GetParam().supported});
  ASSERT_TRUE(v.accepted());
  EXPECT_EQ(v.subprotocol, GetParam().selected);
  const std::string response = fg::http::accept_response(v);
  EXPECT_EQ(response.find("Sec-WebSocket-Protocol") != std::string::npos, !GetParam().selected.empty()) << response;
  if (!GetParam().selected.empty()) {
    EXPECT_NE(response.find("\r\nSec-WebSocket-Protocol: " + GetParam().selected + "\r\n"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(
    cases, handshake_subprotocol,
    ::testing::Values(subprotocol_case{"client_order_wins", {"superchat, chat"}, {"chat", "superchat"}, "superchat"},
                      subprotocol_case{"skips_unsupported", {"foo,  chat"}, {"chat", "superchat"}, "chat"},
                      subprotocol_case{"second_header", {"foo", "chat"}, {"chat"}, "chat"},
                      subprotocol_case{"no_overlap", {"foo, bar"}, {"chat"}, ""},
                      subprotocol_case{"none_offered", {}, {"chat"}, ""},
                      subprotocol_case{"none_supported", {"chat"}, {}, ""},
                      subprotocol_case{
                          "padded_token", {" \tv2.proto.example \t"}, {"v2.proto.example"}, "v2.proto.example"}),
    fg::test::param_name{});

// ---------------------------------------------------------------------------
// Responses, checked by parsing them back with Beast.

http::response<http::string_body> parse_response(const std::string& text) {
  http::response_parser<http::string_body> p;
  p.eager(true);
  boost::beast::error_code ec;
  const std::size_t used = p.put(boost::asio::buffer(text), ec);
  EXPECT_FALSE(ec) << ec.message() << "\n" << text;
  EXPECT_EQ(used, text.size()) << text;
  EXPECT_TRUE(p.is_done()) << text;
  return p.release();
}

class refusal_response_status : public ::testing::TestWithParam<unsigned> {};

TEST_P(refusal_response_status, is_complete_http) {
  const unsigned status = GetParam();
  const std::string text = fg::http::refusal_response(status, "what went wrong");
  EXPECT_EQ(text.rfind("HTTP/1.1 " + std::to_string(status) + " ", 0), 0u) << text;
  EXPECT_NE(text.find("\r\nConnection: close\r\n"), std::string::npos);
  const auto res = parse_response(text);
  EXPECT_EQ(res.result_int(), status);
  EXPECT_FALSE(res.reason().empty());
  EXPECT_EQ(res.body(), "what went wrong\n");
  EXPECT_EQ(res[http::field::content_length], std::to_string(res.body().size()));
  EXPECT_FALSE(res.keep_alive());
  EXPECT_EQ(res[http::field::sec_websocket_version], status == 426 ? "13" : "");
  EXPECT_EQ(res[http::field::allow], status == 405 ? "GET" : "");
}

INSTANTIATE_TEST_SUITE_P(statuses, refusal_response_status, ::testing::Values(400u, 403u, 405u, 426u));

TEST(handshake_response, refusal_for_a_real_verdict) {
  request req = valid_request();
  req.set(http::field::sec_websocket_version, "8");
  const auto v = evaluate_handshake(req, {});
  const std::string text = fg::http::refusal_response(v.status, v.reason);
  EXPECT_EQ(text.rfind("HTTP/1.1 426 Upgrade Required\r\n", 0), 0u) << text;
  EXPECT_NE(text.find("\r\nSec-WebSocket-Version: 13\r\n"), std::string::npos) << text;
  EXPECT_EQ(parse_response(text).body(), std::string(v.reason) + "\n");
}

TEST(handshake_response, accept_response_is_a_101_with_the_key) {
  request req = valid_request();
  req.set(http::field::sec_websocket_protocol, "chat");
  const auto v = evaluate_handshake(req, {{}, {"chat"}});
  const std::string text = fg::http::accept_response(v);
  EXPECT_EQ(text.rfind("HTTP/1.1 101 Switching Protocols\r\n", 0), 0u) << text;
  EXPECT_NE(text.find("\r\nSec-WebSocket-Accept: " + std::string(sample_accept) + "\r\n"), std::string::npos);
  EXPECT_NE(text.find("\r\nSec-WebSocket-Protocol: chat\r\n"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 4), "\r\n\r\n");
  http::response_parser<http::empty_body> p;
  p.skip(true);  // a 101 has no body
  boost::beast::error_code ec;
  p.put(boost::asio::buffer(text), ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(p.get().result_int(), 101u);
  EXPECT_TRUE(http::token_list(p.get()[http::field::connection]).exists("upgrade"));
  EXPECT_TRUE(boost::beast::iequals(p.get()[http::field::upgrade], "websocket"));
}

// ---------------------------------------------------------------------------
// permessage-deflate in the handshake (the rules are tested with the
// negotiation itself, tests/unit/gateway/ws/deflate_negotiation_test.cpp).

handshake_options with_deflate() {
  handshake_options o;
  o.deflate.enabled = true;
  return o;
}

TEST(handshake_deflate, accepted_offer_is_answered) {
  request req = valid_request();
  req.insert(http::field::sec_websocket_extensions, "x-webkit-deflate-frame");
  req.insert(http::field::sec_websocket_extensions, "permessage-deflate; client_max_window_bits");
  const auto v = evaluate_handshake(req, with_deflate());
  ASSERT_TRUE(v.accepted());
  EXPECT_TRUE(v.deflate.enabled);
  EXPECT_EQ(v.extensions, "permessage-deflate; server_no_context_takeover; client_no_context_takeover");
  const std::string text = fg::http::accept_response(v);
  EXPECT_NE(text.find("\r\nSec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; "
                      "client_no_context_takeover\r\n"),
            std::string::npos)
      << text;
}

TEST(handshake_deflate, no_offer_or_declined_offer_means_no_header) {
  for (const char* offer : {"", "x-webkit-deflate-frame", "permessage-deflate; server_max_window_bits=16"}) {
    request req = valid_request();
    if (*offer != '\0') req.set(http::field::sec_websocket_extensions, offer);
    const auto v = evaluate_handshake(req, with_deflate());
    ASSERT_TRUE(v.accepted()) << offer;
    EXPECT_FALSE(v.deflate.enabled) << offer;
    EXPECT_TRUE(v.extensions.empty()) << offer;
    EXPECT_EQ(fg::http::accept_response(v).find("Sec-WebSocket-Extensions"), std::string::npos) << offer;
  }
}

TEST(handshake_deflate, malformed_header_gets_400) {
  request req = valid_request();
  req.set(http::field::sec_websocket_extensions, "permessage-deflate; server_max_window_bits=\"10");
  const auto v = evaluate_handshake(req, with_deflate());
  EXPECT_EQ(v.status, 400u);
  EXPECT_FALSE(v.reason.empty());
}

TEST(handshake_deflate, without_deflate_the_header_is_not_read) {
  request req = valid_request();
  req.set(http::field::sec_websocket_extensions, "permessage-deflate;;;\"");
  const auto v = evaluate_handshake(req, {});
  EXPECT_TRUE(v.accepted());
  EXPECT_FALSE(v.deflate.enabled);
  EXPECT_TRUE(v.extensions.empty());
  req.set(http::field::sec_websocket_extensions, "permessage-deflate");
  EXPECT_FALSE(evaluate_handshake(req, {}).deflate.enabled);
}

// ---------------------------------------------------------------------------

TEST(header_has_token, lists_case_and_white_space) {
  using fg::http::header_has_token;
  EXPECT_TRUE(header_has_token("Upgrade", "upgrade"));
  EXPECT_TRUE(header_has_token("keep-alive, Upgrade", "upgrade"));
  EXPECT_TRUE(header_has_token(" upgrade ,keep-alive", "UPGRADE"));
  EXPECT_TRUE(header_has_token("a,,b, \t,upgrade", "upgrade"));
  EXPECT_FALSE(header_has_token("", "upgrade"));
  EXPECT_FALSE(header_has_token("upgraded", "upgrade"));
  EXPECT_FALSE(header_has_token("up grade", "upgrade"));
  EXPECT_FALSE(header_has_token("keep-alive", "upgrade"));
  EXPECT_FALSE(header_has_token(",", "upgrade"));
}

}  // namespace
