// The admin HTTP server against a real socket on 127.0.0.1: routing through
// a service, keep-alive, and the start-up errors operators see.
#include "common/httpd/listener.hpp"

#include <gtest/gtest.h>

#include <string>
#include <system_error>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using fg::httpd::response;

// Answers GET /hello; everything else is screened out with 404.
class hello_service final : public fg::httpd::service {
 public:
  std::optional<response> screen(const http::request_header<>& h) const override {
    if (fg::httpd::path_of(h.target()) != "/hello")
      return fg::httpd::make_response(http::status::not_found, h.version(), "not found");
    return std::nullopt;
  }
  void handle(const fg::httpd::request& req, std::function<void(response)> done) override {
    ++handled;
    done(fg::httpd::make_response(http::status::ok, req.version(), "hello"));
  }
  int handled = 0;
};

// One blocking HTTP/1.1 exchange per call on a kept-alive connection; the
// server runs on `io` between calls.
std::string exchange(asio::io_context& io, asio::ip::tcp::socket& s, const std::string& request) {
  asio::write(s, asio::buffer(request));
  std::string got;
  std::array<char, 4096> buf{};
  s.non_blocking(true);
  for (int i = 0; i < 200 && got.find("\r\n\r\n") == std::string::npos; ++i) {
    io.run_for(std::chrono::milliseconds(5));
    boost::system::error_code ec;
    const std::size_t n = s.read_some(asio::buffer(buf), ec);
    if (!ec) got.append(buf.data(), n);
  }
  for (int i = 0; i < 20; ++i) {  // the body follows the head
    io.run_for(std::chrono::milliseconds(5));
    boost::system::error_code ec;
    const std::size_t n = s.read_some(asio::buffer(buf), ec);
    if (!ec) got.append(buf.data(), n);
  }
  return got;
}

TEST(HttpdListener, RoutesRequestsOnAKeptAliveConnection) {
  asio::io_context io;
  hello_service svc;
  fg::httpd::listener l(io, svc);
  l.start({"127.0.0.1", 0});
  ASSERT_NE(l.port(), 0);
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), l.port()});
  const std::string ok = exchange(io, s, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("\r\n\r\nhello\n"), std::string::npos) << ok;
  const std::string missing = exchange(io, s, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(missing.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << missing;
  EXPECT_EQ(svc.handled, 1);
  l.stop();
}

TEST(HttpdListener, AStoppedListenerLeavesNothingForTheLoop) {
  asio::io_context io;
  hello_service svc;
  fg::httpd::listener l(io, svc);
  l.start({"127.0.0.1", 0});
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), l.port()});
  io.run_for(std::chrono::milliseconds(20));  // accepted: a session waits for a request
  l.stop();
  io.restart();
  // A worker's loop must run out of work at shutdown even with a scraper
  // still connected (the client socket stays open through the check).
  io.run_for(std::chrono::seconds(3));
  EXPECT_TRUE(io.stopped()) << "the listener or a session kept the loop alive";
  s.close();
}

TEST(HttpdListener, AnAddressInUseIsAStdSystemErrorNamingIt) {
  asio::io_context io;
  hello_service svc;
  fg::httpd::listener first(io, svc), second(io, svc);
  first.start({"127.0.0.1", 0});
  try {
    second.start({"127.0.0.1", first.port()});
    FAIL() << "a second listener on the same port started";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(first.port())), std::string::npos) << e.what();
  }
  EXPECT_THROW(second.start({"not-an-address", 1}), std::system_error);
}

}  // namespace
