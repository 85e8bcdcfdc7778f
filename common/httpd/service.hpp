// What an admin HTTP listener answers, apart from how bytes move: each
// process implements it (the gateway's admin routes, the worker's). The
// listener and its sessions (listener.hpp, session.hpp) are shared.
//
// Checks run in two steps so that nothing is read of a body that will be
// refused anyway: screen() sees only the header, handle() the whole
// request. Both run on the listener's event loop.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace fg::httpd {

using request = boost::beast::http::request<boost::beast::http::string_body>;
using response = boost::beast::http::response<boost::beast::http::string_body>;

class service {
 public:
  virtual ~service() = default;
  // An answer that needs no body (404, 405, 401, 413...), or nullopt: the
  // session reads the body (up to max_body_bytes()), then calls handle().
  virtual std::optional<response> screen(const boost::beast::http::request_header<>& header) const = 0;
  // Called once per request that passed screen(); `done` may run later, on
  // the listener's loop.
  virtual void handle(const request& req, std::function<void(response)> done) = 0;
  [[nodiscard]] virtual std::size_t max_body_bytes() const noexcept { return 0; }
  // The answer to a body over max_body_bytes() that screen() could not
  // size in advance (chunked).
  [[nodiscard]] virtual response body_too_large(unsigned version) const;
};

// A complete response with a body (`type` is its Content-Type); a newline
// is appended to a one-line body unless `exact`.
response make_response(boost::beast::http::status status, unsigned version, std::string body,
                       const char* type = "text/plain; charset=utf-8", bool exact = false);

// The path of a request target, without its query string.
std::string_view path_of(boost::beast::string_view target);

// A 405 naming the one allowed method.
response method_not_allowed(unsigned version, const char* allowed);

}  // namespace fg::httpd
