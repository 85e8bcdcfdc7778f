// Sets (or unsets) an environment variable for one test and puts back what
// was there, so tests of code that reads FRAMEGATE_* variables neither see
// the caller's environment nor leave theirs to the next test.
#pragma once

#include <stdlib.h>

#include <optional>
#include <string>
#include <utility>

namespace fg::test {

class scoped_env {
 public:
  // nullopt: the variable is unset for the test.
  scoped_env(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* before = ::getenv(name_.c_str())) saved_ = before;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~scoped_env() {
    if (saved_)
      ::setenv(name_.c_str(), saved_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace fg::test
