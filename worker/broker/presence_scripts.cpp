#include "worker/broker/presence_scripts.hpp"

#include <algorithm>
#include <map>

namespace fg::worker {

namespace {

constexpr std::string_view update_body = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[4])
if ARGV[1] ~= '' then
  if tonumber(ARGV[2]) > 0 then
    redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  else
    redis.call('HDEL', KEYS[1], ARGV[1])
  end
end
redis.call('ZADD', KEYS[2], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], 2 * ttl)
redis.call('PEXPIRE', KEYS[2], 2 * ttl)
return 1
)lua";

constexpr std::string_view read_body = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
if #gone > 0 then
  local dead = {}
  for _, o in ipairs(gone) do dead[o] = true end
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    if dead[string.sub(f, 1, 16)] then redis.call('HDEL', KEYS[1], f) end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
end
return redis.call('HGETALL', KEYS[1])
)lua";

bool positive_count(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 9) return false;
  out = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return out > 0;
}

bool origin_hex(std::string_view s) {
  return s.size() == 16 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

const redis_script& presence_update_script() {
  static const redis_script s = make_redis_script(update_body);
  return s;
}

const redis_script& presence_read_script() {
  static const redis_script s = make_redis_script(read_body);
  return s;
}

std::string presence_key(std::string_view channel) { return room_key(channel, ":p"); }
std::string presence_deadlines_key(std::string_view channel) { return room_key(channel, ":pw"); }

std::string presence_field(std::string_view origin_hex, std::string_view user) {
  std::string f;
  f.reserve(origin_hex.size() + 1 + user.size());
  f.append(origin_hex).append("|").append(user);
  return f;
}

std::vector<presence_entry> sum_presence(const std::vector<std::pair<std::string_view, std::string_view>>& fields) {
  std::map<std::string_view, std::uint64_t> per_user;
  for (const auto& [field, value] : fields) {
    std::uint64_t n = 0;
    if (field.size() < 17 || field[16] != '|' || !origin_hex(field.substr(0, 16)) || !positive_count(value, n))
      continue;
    per_user[field.substr(17)] += n;
  }
  std::vector<presence_entry> out;
  out.reserve(per_user.size());
  for (const auto& [user, n] : per_user) out.push_back({std::string(user), n});
  return out;
}

}  // namespace fg::worker
