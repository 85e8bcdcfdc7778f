#include "worker/broker/history_scripts.hpp"

#include <string>

namespace fg::worker {

namespace {

// Seqs are below 2^53 in practice (one origin per worker process, +1 per
// publish), so Lua's numbers compare them exactly.
constexpr std::string_view publish_body = R"lua(
local seen = redis.call('HGET', KEYS[1], ARGV[3])
if seen and tonumber(seen) >= tonumber(ARGV[4]) then return {-1, 0} end
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
return {redis.call('PUBLISH', ARGV[1], 'fgo ' .. epoch .. ' ' .. top .. '\n' .. ARGV[2]), top}
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

}  // namespace

const redis_script& history_publish_script(bool sharded) {
  static const redis_script plain = make_redis_script(publish_body);
  // The same script with SPUBLISH: on a cluster a script may only reach
  // its own slot, and the room's channel is in it (room_channel.hpp).
  static const std::string sharded_body = [] {
    std::string b(publish_body);
    b.replace(b.find("'PUBLISH'"), 9, "'SPUBLISH'");
    return b;
  }();
  static const redis_script spublish = make_redis_script(sharded_body);
  return sharded ? spublish : plain;
}

const redis_script& history_read_script() {
  static const redis_script s = make_redis_script(read_body);
  return s;
}

std::string history_meta_key(std::string_view channel) { return room_key(channel, ":m"); }
std::string history_stream_key(std::string_view channel) { return room_key(channel, ":h"); }

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
