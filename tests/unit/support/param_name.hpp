// Names parameterized test instances after the case's `name` member, so a
// failure reads "errors/named.rsv2" rather than "errors/named.3".
#pragma once

#include <ostream>
#include <string>

#include <gtest/gtest.h>

namespace fg::test {

struct param_name {
  template <class Param>
  std::string operator()(const ::testing::TestParamInfo<Param>& p) const {
    return std::string(p.param.name);
  }
};

}  // namespace fg::test

// GoogleTest prints a failing case's parameter as raw bytes unless a
// PrintTo is found by ADL in the parameter's namespace; this declares one
// there (the test's anonymous namespace) that prints the case's name.
#define FG_PRINT_CASES_BY_NAME()               \
  template <class Case>                        \
  requires requires(const Case& c) { c.name; } \
  [[maybe_unused]] void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
