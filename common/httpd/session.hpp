// One admin HTTP connection: read a header, screen it, read the body only
// if the request passed, answer, and loop while keep-alive holds. One
// request at a time; every read and write is bounded by a timeout so an
// idle or slow client cannot hold a connection forever.
#pragma once

#include <array>
#include <memory>
#include <optional>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>

#include "common/httpd/service.hpp"

namespace fg::httpd {

class session : public std::enable_shared_from_this<session> {
 public:
  session(boost::beast::tcp_stream stream, service& routes);
  void start() { do_read_header(); }
  // Closes the socket now (listener shutdown); pending operations end.
  void stop();

 private:
  void do_read_header();
  void on_header(boost::beast::error_code ec);
  void do_read_body();
  void on_body(boost::beast::error_code ec);
  void do_write(response res, bool close_after);
  void on_write(boost::beast::error_code ec);
  void do_close();
  void do_linger();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  service& routes_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<response> writing_;  // kept alive until its write completes
  bool close_after_ = false;
  std::array<char, 4096> discard_{};  // what a refused client still sends, read to drop
  std::size_t lingered_ = 0;
};

}  // namespace fg::httpd
