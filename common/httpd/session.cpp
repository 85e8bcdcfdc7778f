#include "common/httpd/session.hpp"

#include <chrono>
#include <cstdint>
#include <limits>

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace fg::httpd {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {

constexpr std::chrono::seconds io_timeout{10};
constexpr std::uint32_t max_header_bytes = 8192;
constexpr std::chrono::seconds linger_timeout{2};
constexpr std::size_t max_linger_bytes = 16 * 1024 * 1024;

}  // namespace

session::session(beast::tcp_stream stream, service& routes) : stream_(std::move(stream)), routes_(routes) {}

void session::stop() {
  beast::error_code ignored;
  stream_.socket().close(ignored);
}

void session::do_read_header() {
  parser_.emplace();
  parser_->header_limit(max_header_bytes);
  // No body limit yet: Beast would reject a large Content-Length while
  // reading the header, before screen() could answer 404, 401 or 413.
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  stream_.expires_after(io_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void session::on_header(beast::error_code ec) {
  if (ec == http::error::header_limit)
    return do_write(make_response(http::status::request_header_fields_too_large, 11, "header too large"), true);
  if (ec) return do_close();  // end of stream, timeout, malformed request: nothing worth answering

  const auto& header = parser_->get();
  if (auto early = routes_.screen(header)) {
    // The body (if any) stays unread, so the connection cannot carry another request.
    const bool body_pending = !parser_->is_done();
    return do_write(std::move(*early), body_pending || !parser_->keep_alive());
  }
  // RFC 9110 §10.1.1: a client waiting for 100 Continue sends the body after it.
  if (beast::iequals(header[http::field::expect], "100-continue") && !parser_->is_done()) {
    auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_, header.version());
    stream_.expires_after(io_timeout);
    http::async_write(stream_, *cont, [self = shared_from_this(), cont](beast::error_code wec, std::size_t) {
      if (wec) return self->do_close();
      self->do_read_body();
    });
    return;
  }
  do_read_body();
}

void session::do_read_body() {
  // Guards bodies without Content-Length (chunked), which screen() cannot size.
  parser_->body_limit(routes_.max_body_bytes());
  stream_.expires_after(io_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_body(ec); });
}

void session::on_body(beast::error_code ec) {
  if (ec == http::error::body_limit) return do_write(routes_.body_too_large(parser_->get().version()), true);
  if (ec) return do_close();
  const bool keep_alive = parser_->keep_alive();
  stream_.expires_never();  // the answer may wait for I/O thread 0
  routes_.handle(parser_->get(), [self = shared_from_this(), keep_alive](response res) {
    self->do_write(std::move(res), !keep_alive);
  });
}

void session::do_write(response res, bool close_after) {
  close_after_ = close_after;
  res.keep_alive(!close_after);
  writing_ = std::make_shared<response>(std::move(res));
  stream_.expires_after(io_timeout);
  http::async_write(stream_, *writing_,
                    [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
}

void session::on_write(beast::error_code ec) {
  writing_.reset();
  if (ec || close_after_) return do_close();
  do_read_header();
}

// A close with unread bytes in the socket makes the kernel send a reset,
// which can destroy our answer (a 413, say) before the client read it. So
// half-close, then read and discard what the client still sends, bounded
// in time and bytes (nginx's lingering close).
void session::do_close() {
  beast::error_code ignored;
  stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  stream_.expires_after(linger_timeout);
  do_linger();
}

void session::do_linger() {
  stream_.async_read_some(boost::asio::buffer(discard_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                            self->lingered_ += n;
                            if (ec || self->lingered_ > max_linger_bytes) return self->stream_.close();
                            self->do_linger();
                          });
}

}  // namespace fg::httpd
