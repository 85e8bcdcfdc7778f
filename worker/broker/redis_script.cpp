#include "worker/broker/redis_script.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>

#include <openssl/evp.h>

#include "worker/broker/hash_tag.hpp"

namespace fg::worker {

redis_script make_redis_script(std::string_view body) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(body.data(), body.size(), digest.data(), &size, EVP_sha1(), nullptr) != 1)
    throw std::runtime_error("OpenSSL has no SHA-1 (needed to name the broker's scripts for EVALSHA)");
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    std::array<char, 3> two{};
    std::snprintf(two.data(), two.size(), "%02x", digest[i]);
    hex.append(two.data(), 2);
  }
  return {body, std::move(hex)};
}

std::string room_key(std::string_view channel, std::string_view suffix) {
  std::string key;
  key.reserve(channel.size() + 2 + suffix.size());
  // A channel with a hash tag keeps it first in the key; any other is
  // made the key's hash tag. (A channel holding '}' but no tag has no key
  // in its slot: room_channel gives cluster channels a tag.)
  if (has_hash_tag(channel))
    key.append(channel).append(suffix);
  else
    key.append("{").append(channel).append("}").append(suffix);
  return key;
}

}  // namespace fg::worker
