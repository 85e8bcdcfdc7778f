// Secrets read from files: one trailing newline dropped, clear errors that
// name the option and the file but never the content.
#include "common/secret_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "common/config_error.hpp"
#include "tests/unit/support/scoped_temp_dir.hpp"

namespace {

class SecretFile : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& content) {
    const auto path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::string error_of(const std::string& path) {
    try {
      (void)fg::read_secret_file(path, "--api-token-file");
    } catch (const fg::config_error& e) {
      return e.what();
    }
    return "no error";
  }

  fg::test::scoped_temp_dir tmp_{"fg-secret-test"};
  const std::string dir_ = tmp_.path().native();
};

TEST_F(SecretFile, DropsOneTrailingNewline) {
  EXPECT_EQ(fg::read_secret_file(write("a", "s3cret\n"), "--x"), "s3cret");
  EXPECT_EQ(fg::read_secret_file(write("b", "s3cret\r\n"), "--x"), "s3cret");
  EXPECT_EQ(fg::read_secret_file(write("c", "s3cret"), "--x"), "s3cret");
  // Only one: the rest is the secret, as written.
  EXPECT_EQ(fg::read_secret_file(write("d", " s3 cret \n\n"), "--x"), " s3 cret \n");
}

TEST_F(SecretFile, AMissingFileIsAConfigErrorNamingOptionAndPath) {
  const auto path = dir_ + "/missing";
  const auto e = error_of(path);
  EXPECT_NE(e.find("--api-token-file"), std::string::npos) << e;
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("cannot read"), std::string::npos) << e;
}

TEST_F(SecretFile, AnUnreadableFileIsAConfigError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files of any mode";
  const auto path = write("locked", "s3cret\n");
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  const auto e = error_of(path);
  EXPECT_NE(e.find("cannot read"), std::string::npos) << e;
  EXPECT_EQ(e.find("s3cret"), std::string::npos) << e;
}

TEST_F(SecretFile, ADirectoryIsAConfigError) {
  const auto e = error_of(dir_);
  EXPECT_NE(e.find("--api-token-file"), std::string::npos) << e;
}

TEST_F(SecretFile, AnEmptySecretIsAConfigError) {
  for (const char* content : {"", "\n", "\r\n"}) {
    const auto e = error_of(write("empty", content));
    EXPECT_NE(e.find("empty"), std::string::npos) << e;
  }
}

}  // namespace
