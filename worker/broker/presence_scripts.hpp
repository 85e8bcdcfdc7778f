// Room presence in Redis: who has connections in a room, across every
// worker and host. Each worker writes only its own share and refreshes it;
// a worker that stops refreshing (crashed, cut off) drops out when its
// deadline passes, the next time anyone reads.
//
// Per room (channel C), in the channel's hash slot like the history keys:
//   {C}:p   hash: "<origin hex>|<user>" -> that worker's connections of user
//   {C}:pw  sorted set: origin hex -> deadline (Redis time, ms)
// Both expire two TTLs after the last write, so an abandoned room goes.
//
// update:  KEYS {C}:p {C}:pw; ARGV field ("" to only refresh), count (0
//          removes the field), origin, ttl ms. Returns 1.
// read:    KEYS {C}:p {C}:pw. Removes the fields of origins past their
//          deadline, then returns HGETALL of {C}:p.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "worker/app.hpp"
#include "worker/broker/redis_script.hpp"

namespace fg::worker {

const redis_script& presence_update_script();
const redis_script& presence_read_script();

std::string presence_key(std::string_view channel);
std::string presence_deadlines_key(std::string_view channel);
// "<origin hex>|<user>".
std::string presence_field(std::string_view origin_hex, std::string_view user);

// HGETALL's [field, count, ...] summed per user, sorted by user. Fields
// that are not "<16 hex>|user" and counts that are not positive integers
// are skipped (Redis is shared: anything may be there).
std::vector<presence_entry> sum_presence(const std::vector<std::pair<std::string_view, std::string_view>>& fields);

}  // namespace fg::worker
