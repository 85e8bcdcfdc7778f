// Fuzzes the --static-dir file lookup with request targets, which come
// straight from the network: whatever the target (escapes, dot segments,
// NULs, symlinks out of the directory), a 200 is only ever one of the
// directory's own, visible, typed files, with its bytes and type, and
// every answer is a well-formed HTTP response.
//
// The directory is built once per process in a fresh temporary directory:
// files inside it (the only ones that may be served), and what must never
// be: a file beside it, a symlink inside it pointing there, a hidden file,
// a file of an unknown type and one over the size limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "gateway/http/static_files.hpp"
#include "tests/fuzz/check.hpp"
#include "tests/unit/support/scoped_temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace sf = fg::http::static_files;
using fg::fuzz::check;

// Every servable file's content starts with this; nothing else does.
constexpr std::string_view servable = "SERVABLE ";

void write(const fs::path& file, std::string_view content) { std::ofstream(file, std::ios::binary) << content; }

class fixture {
 public:
  fixture() : site_(top_.path() / "site") {
    const fs::path& top = top_.path();
    fs::create_directories(site_ / "sub");
    write(site_ / "index.html", std::string(servable) + "index");
    write(site_ / "app.js", std::string(servable) + "app");
    write(site_ / "sub" / "index.html", std::string(servable) + "sub index");
    write(site_ / "sub" / "Style.CSS", std::string(servable) + "style");
    write(site_ / ".hidden.js", "SECRET hidden");
    write(site_ / "notes.secret", "SECRET unknown type");
    write(site_ / "big.txt", std::string(sf::max_file_bytes + 1, 'S'));
    write(top / "outside.js", "SECRET outside");
    fs::create_symlink(top / "outside.js", site_ / "escape.js");
    fs::create_symlink(top, site_ / "up");
    fs::create_symlink(site_ / "app.js", site_ / "sub" / "alias.js");  // inside: servable
  }
  [[nodiscard]] std::string site() const { return site_.string(); }

 private:
  fg::test::scoped_temp_dir top_{"fg-fuzz-static"};  // removed with everything in it
  fs::path site_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fixture files;
  const std::string_view target(reinterpret_cast<const char*>(data), size);
  const sf::result r = sf::resolve(files.site(), target);
  check(r.status == 200 || r.status == 404);
  if (r.status == 200) {
    check(r.body.starts_with(servable));
    check(!r.content_type.empty());
  } else {
    check(r.body.empty());
  }
  for (const bool head : {false, true}) {
    const std::string response = sf::response(r, head);
    check(response.starts_with(r.status == 200 ? "HTTP/1.1 200 " : "HTTP/1.1 404 "));
    const auto end = response.find("\r\n\r\n");
    check(end != std::string::npos);
    // Content-Length is what a GET gets, HEAD or not; a 200's is the file's.
    constexpr std::string_view field = "\r\nContent-Length: ";
    const auto at = response.find(field);
    check(at != std::string::npos && at < end);
    const auto value = at + field.size();
    const std::size_t length = std::stoul(response.substr(value, response.find("\r\n", value) - value));
    if (r.status == 200) check(length == r.body.size());
    check(response.size() - (end + 4) == (head ? 0 : length));
  }
  return 0;
}
