// The supervisor's --config reader: the format --print-config writes, and
// what CLI11's set_config() would read differently (see config_file.hpp).
#include "supervisor/config_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using fg::supervisor::config_entry;
using fg::supervisor::read_config_file;

struct config_file_test : ::testing::Test {
  std::string path = ::testing::TempDir() + "config_file_test_" + std::to_string(getpid()) + ".conf";
  ~config_file_test() override { std::remove(path.c_str()); }

  std::vector<config_entry> read(const std::string& text) {
    std::ofstream(path) << text;
    return read_config_file(path);
  }
  std::string error_of(const std::string& text) {
    try {
      read(text);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(config_file_test, ReadsNameValueLinesSkippingCommentsAndBlanks) {
  const auto entries = read("# framegate up\n\n  workers = 3 \n\tlisten=127.0.0.1:7000\n   # indented comment\n");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "workers");
  EXPECT_EQ(entries[0].value, "3");
  EXPECT_EQ(entries[0].line, 3);
  EXPECT_EQ(entries[1].name, "listen");
  EXPECT_EQ(entries[1].value, "127.0.0.1:7000");
  EXPECT_EQ(entries[1].line, 4);
}

TEST_F(config_file_test, ValuesAreKeptWhole) {
  const auto entries = read(
      "static-dir = /srv/my site\norigin = a#b\nsubprotocol = \"chat, v2\"\nredis = 'x'\nempty =\neq = a=b\n"
      "--slow-ms = 5\n");
  ASSERT_EQ(entries.size(), 7u);
  EXPECT_EQ(entries[0].value, "/srv/my site");  // CLI11 would split it in two
  EXPECT_EQ(entries[1].value, "a#b");           // CLI11 would cut it at '#'
  EXPECT_EQ(entries[2].value, "chat, v2");      // matching quotes go
  EXPECT_EQ(entries[3].value, "x");
  EXPECT_EQ(entries[4].value, "");
  EXPECT_EQ(entries[5].value, "a=b");
  EXPECT_EQ(entries[6].name, "slow-ms");  // a name copied from the command line
}

TEST_F(config_file_test, BadLinesNameFileAndLine) {
  EXPECT_EQ(error_of("workers = 2\njust words\n"), path + ":2: expected 'name = value'");
  EXPECT_EQ(error_of("\n\nbad name! = 1\n"), path + ":3: bad option name 'bad name!'");
  EXPECT_EQ(error_of(" = 1\n"), path + ":1: bad option name ''");
  EXPECT_EQ(error_of("workers = 2\n"), "");
}

TEST(ConfigFile, AMissingFileIsAnError) {
  EXPECT_THROW(read_config_file("/nonexistent-dir/framegate.conf"), std::runtime_error);
}

}  // namespace
