// Static files on the client listener, for the bundled browser demo: with
// --static-dir, a plain HTTP GET or HEAD (no `Upgrade: websocket`) is
// answered from one directory. Small and strict on purpose: only regular
// files inside the directory, of a few known types, up to 1 MiB, each read
// whole and sent with `Connection: close`. WebSocket upgrades never get here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>

namespace fg::http::static_files {

inline constexpr std::size_t max_file_bytes = 1024 * 1024;

struct result {
  unsigned status = 404;          // 200, 404 (anything not servable) or 405 (set by the caller)
  std::string_view content_type;  // when 200
  std::string body;               // the file's bytes, when 200
};

// Maps a request target ("/", "/app.js?v=2") to a file of `dir` and reads it;
// "/" and every path ending in '/' mean its index.html. 404 unless the file
// is a regular file inside `dir` (after following symlinks) with a known
// extension and at most max_file_bytes. Percent escapes are decoded first;
// a bad escape, a NUL byte, a segment starting with '.' (so `..`, `.` and
// hidden files), a target not starting with '/' or an unreadable `dir` are 404.
result resolve(const std::string& dir, std::string_view target);

// "text/html; charset=utf-8" for "index.html"; empty for an unknown extension.
std::string_view content_type_for(std::string_view file_name);

// True when the request does not ask to be upgraded to a WebSocket: such a
// request is served from the directory instead of refused with 426.
bool is_plain_request(const boost::beast::http::request_header<>& req);

// The whole HTTP/1.1 response for `r` (405 answers `Allow: GET, HEAD`); no
// body for HEAD, with the Content-Length a GET would get.
std::string response(const result& r, bool head);

}  // namespace fg::http::static_files
