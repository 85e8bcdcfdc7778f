#include "common/link/link_dir_trust.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/support/scoped_env.hpp"
#include "tests/unit/support/scoped_temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

class link_dir_trust : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return tmp_.at(name); }
  fg::test::scoped_temp_dir tmp_{"fg-trust"};
  const std::string root_ = tmp_.path().native();
};

TEST_F(link_dir_trust, a_private_directory_of_ours_is_trusted_and_a_missing_one_is_not_judged) {
  EXPECT_EQ(fg::link::untrusted_link_dir(root_), std::nullopt);
  EXPECT_EQ(fg::link::untrusted_link_dir(path("missing")), std::nullopt);
  ::chmod(root_.c_str(), 0755);  // readable by others is fine: only writing lets them in
  EXPECT_EQ(fg::link::untrusted_link_dir(root_), std::nullopt);
}

TEST_F(link_dir_trust, group_or_world_writable_symbolic_links_and_files_are_not) {
  ::chmod(root_.c_str(), 0777);
  EXPECT_NE(fg::link::untrusted_link_dir(root_)->find("writable"), std::string::npos);
  ::chmod(root_.c_str(), 0770);
  EXPECT_NE(fg::link::untrusted_link_dir(root_)->find("mode 0770"), std::string::npos);
  ::chmod(root_.c_str(), 0700);
  fs::create_directory_symlink(root_, path("link"));
  EXPECT_EQ(fg::link::untrusted_link_dir(path("link")), "it is a symbolic link");
  fs::create_directory(path("d"));
  {
    std::FILE* f = std::fopen(path("file").c_str(), "w");
    std::fclose(f);
  }
  EXPECT_EQ(fg::link::untrusted_link_dir(path("file")), "it is not a directory");
}

TEST_F(link_dir_trust, another_users_directory_is_not) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
  ASSERT_EQ(::chown(root_.c_str(), 65534, 65534), 0);
  EXPECT_NE(fg::link::untrusted_link_dir(root_)->find("owned by uid 65534"), std::string::npos);
  EXPECT_THROW(fg::link::prepare_link_dir(root_), std::runtime_error);
}

TEST_F(link_dir_trust, prepare_makes_a_private_directory_with_its_parents_and_refuses_a_bad_one) {
  const std::string dir = path("a/b/links");
  fg::link::prepare_link_dir(dir);
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  fg::link::prepare_link_dir(dir);  // again: fine
  ::chmod(dir.c_str(), 0777);
  EXPECT_THROW(fg::link::prepare_link_dir(dir), std::runtime_error);
}

TEST(link_dir_default, is_per_user) {
  {
    const fg::test::scoped_env runtime("XDG_RUNTIME_DIR", "/run/user/1234");
    EXPECT_EQ(fg::link::default_link_dir(), "/run/user/1234/framegate");
  }
  const fg::test::scoped_env runtime("XDG_RUNTIME_DIR", std::nullopt);
  EXPECT_EQ(fg::link::default_link_dir(), "/tmp/framegate-" + std::to_string(::geteuid()));
}

TEST(peer_uid, is_the_user_at_the_other_end) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  EXPECT_EQ(fg::link::peer_uid(fds[0]), ::geteuid());
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(fg::link::peer_uid(-1), std::nullopt);
}

}  // namespace
