// What the admin listener answers, apart from how bytes move:
//
//   GET  /healthz       200 "ok" while the process runs
//   GET  /readyz        200 once a worker is registered (always in --echo), else 503
//   POST /api/publish   Bearer token; {"room":R,"data":V} or {"messages":[...]}
//                       -> 200 {"published":N}
//
// Checks run in two steps so that nothing is read of a body that will be
// refused anyway: screen() sees only the header (path 404, method 405,
// token 403/401, Content-Length 413), handle() the whole request.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "gateway/admin/admin_backend.hpp"

namespace fg::gateway::admin {

using request = boost::beast::http::request<boost::beast::http::string_body>;
using response = boost::beast::http::response<boost::beast::http::string_body>;

struct admin_options {
  std::string api_token;           // empty: the publish API is disabled (403)
  std::size_t max_body_bytes = 0;  // --max-message-size
};

class admin_routes {
 public:
  admin_routes(admin_options options, admin_backend& backend) : options_(std::move(options)), backend_(backend) {}

  // An answer that needs no body, or nullopt: read the body, then handle().
  std::optional<response> screen(const boost::beast::http::request_header<>& header) const;
  // Called once per request that passed screen(); `done` may run later.
  void handle(const request& req, std::function<void(response)> done);

  [[nodiscard]] std::size_t max_body_bytes() const noexcept { return options_.max_body_bytes; }

 private:
  admin_options options_;
  admin_backend& backend_;
};

// A complete response with a one-line body (`type` is its Content-Type).
response make_response(boost::beast::http::status status, unsigned version, std::string body,
                       const char* type = "text/plain; charset=utf-8");

}  // namespace fg::gateway::admin
