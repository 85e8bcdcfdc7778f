#include "gateway/admin/bearer_token.hpp"

#include <algorithm>
#include <cstddef>

namespace fg::gateway::admin {

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);  // letters only: the scheme name is "Bearer"
         });
}

// Touches every byte of `presented` whatever the outcome; a length
// mismatch is folded into the result instead of returning early.
bool constant_time_equal(std::string_view presented, std::string_view expected) noexcept {
  unsigned diff = presented.size() == expected.size() ? 0u : 1u;
  for (std::size_t i = 0; i < presented.size(); ++i) {
    const auto e = expected.empty() ? 0 : static_cast<unsigned char>(expected[i % expected.size()]);
    diff |= static_cast<unsigned>(static_cast<unsigned char>(presented[i]) ^ e);
  }
  return diff == 0 && !expected.empty();
}

}  // namespace

bool bearer_matches(std::string_view authorization, std::string_view token) noexcept {
  constexpr std::string_view scheme = "Bearer";
  if (authorization.size() <= scheme.size() || !equals_ignoring_case(authorization.substr(0, scheme.size()), scheme) ||
      authorization[scheme.size()] != ' ')
    return false;
  std::string_view presented = authorization.substr(scheme.size());
  presented.remove_prefix(std::min(presented.find_first_not_of(' '), presented.size()));
  while (!presented.empty() && (presented.back() == ' ' || presented.back() == '\t')) presented.remove_suffix(1);
  return constant_time_equal(presented, token);
}

}  // namespace fg::gateway::admin
