// The part of a key (or shard channel) that Redis Cluster hashes: the text
// between the first '{' and the first '}' after it, when that text is not
// empty; otherwise the whole key.
#pragma once

#include <string_view>

namespace fg::worker {

constexpr std::string_view hashed_part(std::string_view key) noexcept {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

// True when the key names its slot with a hash tag.
constexpr bool has_hash_tag(std::string_view key) noexcept { return hashed_part(key).size() != key.size(); }

}  // namespace fg::worker
