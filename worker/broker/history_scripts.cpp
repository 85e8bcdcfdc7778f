#include "worker/broker/history_scripts.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>

#include <openssl/evp.h>

namespace fg::worker {

namespace {

// Seqs are below 2^53 in practice (one origin per worker process, +1 per
// publish), so Lua's numbers compare them exactly.
constexpr std::string_view publish_body = R"lua(
local seen = redis.call('HGET', KEYS[1], ARGV[3])
if seen and tonumber(seen) >= tonumber(ARGV[4]) then return -1 end
local epoch = redis.call('HGET', KEYS[1], '!epoch')
if not epoch then
  epoch = ARGV[7]
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], '!epoch', epoch, '!top', 0)
end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
local top = redis.call('HINCRBY', KEYS[1], '!top', 1)
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[5], top .. '-0', 'm', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('EXPIRE', KEYS[2], ARGV[6])
return redis.call('PUBLISH', ARGV[1], 'fgo ' .. epoch .. ' ' .. top .. '\n' .. ARGV[2])
)lua";

constexpr std::string_view read_body = R"lua(
local epoch = redis.call('HGET', KEYS[1], '!epoch')
if not epoch then
  epoch = ARGV[1]
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], '!epoch', epoch, '!top', 0)
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
local top = tonumber(redis.call('HGET', KEYS[1], '!top'))
local entries = {}
if ARGV[3] ~= '' then
  local after = tonumber(ARGV[3])
  if after < top then
    entries = redis.call('XRANGE', KEYS[2], (after + 1) .. '-0', '+', 'COUNT', ARGV[4])
  end
end
return {epoch, top, entries}
)lua";

history_script make_script(std::string_view body) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(body.data(), body.size(), digest.data(), &size, EVP_sha1(), nullptr) != 1)
    throw std::runtime_error("OpenSSL has no SHA-1 (needed to name the history scripts for EVALSHA)");
  std::string hex;
  hex.reserve(2 * digest.size());
  for (unsigned int i = 0; i < size; ++i) {
    const unsigned char b = digest[i];
    std::array<char, 3> two{};
    std::snprintf(two.data(), two.size(), "%02x", b);
    hex.append(two.data(), 2);
  }
  return {body, std::move(hex)};
}

std::string tagged(std::string_view channel, std::string_view suffix) {
  std::string key;
  key.reserve(channel.size() + 2 + suffix.size());
  key.append("{").append(channel).append("}").append(suffix);
  return key;
}

}  // namespace

const history_script& history_publish_script() {
  static const history_script s = make_script(publish_body);
  return s;
}

const history_script& history_read_script() {
  static const history_script s = make_script(read_body);
  return s;
}

std::string history_meta_key(std::string_view channel) { return tagged(channel, ":m"); }
std::string history_stream_key(std::string_view channel) { return tagged(channel, ":h"); }

std::string new_room_epoch(std::mt19937_64& rng) {
  static constexpr std::string_view digits = "0123456789abcdef";
  std::string e(16, '0');
  std::uint64_t v = rng();
  for (char& c : e) {
    c = digits[v & 0xf];
    v >>= 4;
  }
  return e;
}

}  // namespace fg::worker
