#include "gateway/http/static_files.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>
#include <utility>

#include <boost/beast/http/field.hpp>

#include "gateway/http/handshake.hpp"

namespace fg::http::static_files {

namespace fs = std::filesystem;

namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 8> types{{
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".json", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
}};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The path of `target` with its percent escapes decoded; false if malformed.
bool decode_path(std::string_view target, std::string& out) {
  target = target.substr(0, target.find_first_of("?#"));
  if (target.empty() || target.front() != '/') return false;
  out.clear();
  for (std::size_t i = 0; i < target.size(); ++i) {
    char c = target[i];
    if (c == '%') {
      if (i + 2 >= target.size()) return false;
      const int hi = hex_value(target[i + 1]), lo = hex_value(target[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    if (c == '\0') return false;
    out.push_back(c);
  }
  return true;
}

// `path` relative to the directory (empty for the directory itself);
// nullopt if a segment is not allowed.
std::optional<fs::path> relative_path(std::string_view path) {
  fs::path rel;
  while (!path.empty()) {
    const auto slash = path.find('/');
    const auto segment = path.substr(0, slash);
    if (!segment.empty()) {
      if (segment.front() == '.') return std::nullopt;
      rel /= fs::path(std::string(segment));
    }
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
  }
  return rel;
}

bool is_inside(const fs::path& root, const fs::path& file) {
  const auto [r, f] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  return r == root.end() && f != file.end();
}

}  // namespace

std::string_view content_type_for(std::string_view file_name) {
  const auto dot = file_name.rfind('.');
  if (dot == std::string_view::npos) return {};
  const auto ext = file_name.substr(dot);
  for (const auto& [e, type] : types)
    if (std::equal(ext.begin(), ext.end(), e.begin(), e.end(),
                   [](char a, char b) { return (a >= 'A' && a <= 'Z' ? a - 'A' + 'a' : a) == b; }))
      return type;
  return {};
}

result resolve(const std::string& dir, std::string_view target) {
  result r;
  std::string path;
  if (dir.empty() || !decode_path(target, path)) return r;
  auto rel = relative_path(path);
  if (!rel) return r;
  if (rel->empty() || path.back() == '/') *rel /= "index.html";
  const auto type = content_type_for(rel->filename().string());
  if (type.empty()) return r;

  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) return r;
  const fs::path file = fs::canonical(root / *rel, ec);  // follows every symlink
  if (ec || !is_inside(root, file) || !fs::is_regular_file(file, ec) || ec) return r;
  const auto size = fs::file_size(file, ec);
  if (ec || size > max_file_bytes) return r;

  std::ifstream in(file, std::ios::binary);
  if (!in) return r;
  std::string body(static_cast<std::size_t>(size) + 1, '\0');
  in.read(body.data(), static_cast<std::streamsize>(body.size()));
  const auto got = static_cast<std::size_t>(in.gcount());
  if (in.bad() || got > size) return r;  // it grew since file_size(): being rewritten
  body.resize(got);
  r.status = 200;
  r.content_type = type;
  r.body = std::move(body);
  return r;
}

bool is_plain_request(const boost::beast::http::request_header<>& req) {
  const auto range = req.equal_range(boost::beast::http::field::upgrade);
  return std::none_of(range.first, range.second, [](const auto& h) {
    return header_has_token({h.value().data(), h.value().size()}, "websocket");
  });
}

std::string response(const result& r, bool head) {
  std::string_view status_line, type = "text/plain; charset=utf-8", body;
  switch (r.status) {
    case 200:
      status_line = "200 OK";
      type = r.content_type;
      body = r.body;
      break;
    case 405:
      status_line = "405 Method Not Allowed\r\nAllow: GET, HEAD";
      body = "only GET and HEAD are served here\n";
      break;
    default:
      status_line = "404 Not Found";
      body = "no such file\n";
      break;
  }
  std::string out;
  out.reserve(200 + (head ? 0 : body.size()));
  out += "HTTP/1.1 ";
  out += status_line;
  out += "\r\nContent-Type: ";
  out += type;
  out += "\r\nContent-Length: " + std::to_string(body.size());
  out += "\r\nCache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";
  if (!head) out += body;
  return out;
}

}  // namespace fg::http::static_files
