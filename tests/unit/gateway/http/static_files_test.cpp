#include "gateway/http/static_files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/support/scoped_temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
namespace sf = fg::http::static_files;
namespace http = boost::beast::http;

void write_file(const fs::path& p, const std::string& content) {
  std::ofstream out(p, std::ios::binary);
  out << content;
}

// A served directory `root/site` with a sibling `root/secret.txt` outside it.
class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(site_ / "sub");
    write_file(site_ / "index.html", "<!doctype html><p>hi</p>");
    write_file(site_ / "app.js", "console.log(1)");
    write_file(site_ / "style.css", "p{}");
    write_file(site_ / "sub" / "index.html", "sub index");
    write_file(site_ / "sub" / "data.json", "{}");
    write_file(site_ / "a b.txt", "spaced");
    write_file(site_ / "notes.md", "# unknown type");
    write_file(site_ / ".hidden.txt", "hidden");
    write_file(root_ / "secret.txt", "secret");
    fs::create_directories(root_ / "outside");
    write_file(root_ / "outside" / "index.html", "outside");
    fs::create_symlink(root_ / "secret.txt", site_ / "escape.txt");
    fs::create_symlink(root_ / "outside", site_ / "linkdir");
    fs::create_symlink(site_ / "app.js", site_ / "alias.js");
  }
  sf::result get(std::string_view target) const { return sf::resolve(site_.string(), target); }

  fg::test::scoped_temp_dir dir_{"fg-static"};
  const fs::path root_ = dir_.path();
  const fs::path site_ = root_ / "site";
};

TEST_F(StaticFilesTest, RootServesIndexHtml) {
  const auto r = get("/");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "<!doctype html><p>hi</p>");
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
}

TEST_F(StaticFilesTest, ServesFilesWithTheirTypes) {
  EXPECT_EQ(get("/app.js").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(get("/app.js").body, "console.log(1)");
  EXPECT_EQ(get("/style.css").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(get("/sub/data.json").content_type, "application/json");
  EXPECT_EQ(get("/sub/").body, "sub index");
  EXPECT_EQ(get("//sub//data.json").status, 200u);
}

TEST_F(StaticFilesTest, QueryAndFragmentAreIgnored) {
  EXPECT_EQ(get("/app.js?v=2").body, "console.log(1)");
  EXPECT_EQ(get("/?room=demo").body, "<!doctype html><p>hi</p>");
  EXPECT_EQ(get("/app.js#x").status, 200u);
}

TEST_F(StaticFilesTest, PercentEscapesAreDecoded) {
  EXPECT_EQ(get("/a%20b.txt").body, "spaced");
  EXPECT_EQ(get("/%61pp.js").body, "console.log(1)");
  EXPECT_EQ(get("/app.js%").status, 404u);
  EXPECT_EQ(get("/app.js%2").status, 404u);
  EXPECT_EQ(get("/app%zz.js").status, 404u);
}

TEST_F(StaticFilesTest, MissingFilesAre404) {
  EXPECT_EQ(get("/nope.html").status, 404u);
  EXPECT_EQ(get("/nope/").status, 404u);
  EXPECT_TRUE(get("/nope.html").body.empty());
}

TEST_F(StaticFilesTest, TraversalIsRefused) {
  for (const char* t : {"/../secret.txt", "/sub/../../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt",
                        "/sub/%2E%2E/%2E%2E/secret.txt", "/./index.html", "/.hidden.txt", "/sub/.."})
    EXPECT_EQ(get(t).status, 404u) << t;
}

TEST_F(StaticFilesTest, OnlyOriginFormTargets) {
  EXPECT_EQ(get("").status, 404u);
  EXPECT_EQ(get("index.html").status, 404u);
  EXPECT_EQ(get("http://example.com/index.html").status, 404u);
  EXPECT_EQ(get(("/" + root_.string() + "/secret.txt")).status, 404u);  // absolute paths stay inside
}

TEST_F(StaticFilesTest, NulBytesAreRefused) {
  EXPECT_EQ(get(std::string_view("/index.html\0.txt", 16)).status, 404u);
  EXPECT_EQ(get("/index.html%00.txt").status, 404u);
}

TEST_F(StaticFilesTest, SymlinksLeavingTheDirectoryAre404) {
  EXPECT_EQ(get("/escape.txt").status, 404u);
  EXPECT_EQ(get("/linkdir/").status, 404u);
  EXPECT_EQ(get("/linkdir/index.html").status, 404u);
  EXPECT_EQ(get("/alias.js").body, "console.log(1)");  // a symlink inside is fine
}

TEST_F(StaticFilesTest, DirectoriesAndUnknownTypesAre404) {
  EXPECT_EQ(get("/sub").status, 404u);
  EXPECT_EQ(get("/notes.md").status, 404u);
}

TEST_F(StaticFilesTest, LargeFilesAre404) {
  write_file(site_ / "big.txt", std::string(sf::max_file_bytes + 1, 'x'));
  write_file(site_ / "max.txt", std::string(sf::max_file_bytes, 'x'));
  EXPECT_EQ(get("/big.txt").status, 404u);
  EXPECT_EQ(get("/max.txt").body.size(), sf::max_file_bytes);
}

TEST_F(StaticFilesTest, MissingOrEmptyDirectoryIs404) {
  EXPECT_EQ(sf::resolve("", "/").status, 404u);
  EXPECT_EQ(sf::resolve((root_ / "none").string(), "/").status, 404u);
}

TEST(StaticFiles, ContentTypes) {
  EXPECT_EQ(sf::content_type_for("a.HTML"), "text/html; charset=utf-8");
  EXPECT_EQ(sf::content_type_for("logo.svg"), "image/svg+xml");
  EXPECT_EQ(sf::content_type_for("logo.png"), "image/png");
  EXPECT_EQ(sf::content_type_for("favicon.ico"), "image/x-icon");
  EXPECT_EQ(sf::content_type_for("readme.txt"), "text/plain; charset=utf-8");
  EXPECT_EQ(sf::content_type_for("Makefile"), "");
  EXPECT_EQ(sf::content_type_for("a.exe"), "");
}

TEST(StaticFiles, PlainRequestIsOneWithoutUpgradeWebsocket) {
  http::request_header<> req;
  req.method(http::verb::get);
  EXPECT_TRUE(sf::is_plain_request(req));
  req.set(http::field::upgrade, "h2c");
  EXPECT_TRUE(sf::is_plain_request(req));
  req.set(http::field::upgrade, "foo, WebSocket");
  EXPECT_FALSE(sf::is_plain_request(req));
}

TEST(StaticFiles, Response200) {
  sf::result r;
  r.status = 200;
  r.content_type = "text/html; charset=utf-8";
  r.body = "<p>x</p>";
  const auto get = sf::response(r, false);
  EXPECT_EQ(get.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_NE(get.find("\r\nContent-Type: text/html; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(get.find("\r\nContent-Length: 8\r\n"), std::string::npos);
  EXPECT_NE(get.find("\r\nConnection: close\r\n"), std::string::npos);
  EXPECT_EQ(get.substr(get.size() - 12), "\r\n\r\n<p>x</p>");
  const auto head = sf::response(r, true);
  EXPECT_NE(head.find("\r\nContent-Length: 8\r\n"), std::string::npos);
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n");
}

TEST(StaticFiles, Response404And405) {
  const auto not_found = sf::response(sf::result{}, false);
  EXPECT_EQ(not_found.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u);
  EXPECT_EQ(not_found.substr(not_found.size() - 17), "\r\n\r\nno such file\n");
  sf::result m;
  m.status = 405;
  const auto not_allowed = sf::response(m, false);
  EXPECT_EQ(not_allowed.rfind("HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n", 0), 0u);
}

}  // namespace
