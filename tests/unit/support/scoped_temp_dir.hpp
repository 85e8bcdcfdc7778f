// A private directory for one test, removed with everything in it.
//
// mkdtemp gives it a name no other test, run or parallel ctest job holds
// (a pid in the name is not enough when one process runs many tests) and
// mode 0700, which is what the link directory's trust checks expect of a
// directory of ours.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace fg::test {

class scoped_temp_dir {
 public:
  // `prefix` names the test in the directory's name, for whoever finds
  // one left behind by a killed run.
  explicit scoped_temp_dir(std::string_view prefix) {
    std::string name = (std::filesystem::temp_directory_path() / prefix).native() + "-XXXXXX";
    if (::mkdtemp(name.data()) == nullptr) throw std::system_error(errno, std::generic_category(), "mkdtemp " + name);
    path_ = name;
  }
  ~scoped_temp_dir() {
    std::error_code ignored;  // a test that already removed it is fine
    std::filesystem::remove_all(path_, ignored);
  }
  scoped_temp_dir(const scoped_temp_dir&) = delete;
  scoped_temp_dir& operator=(const scoped_temp_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  // The path of `name` inside the directory, as a string (sockets, files).
  [[nodiscard]] std::string at(std::string_view name) const { return (path_ / name).native(); }

 private:
  std::filesystem::path path_;
};

}  // namespace fg::test
