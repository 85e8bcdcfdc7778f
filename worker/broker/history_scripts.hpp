// Room history in Redis: the two Lua scripts the broker runs and the keys
// they use. Redis runs a script atomically, so numbering a message,
// keeping it and publishing it are one step: the order of offsets is the
// order of delivery, and what the history holds is what was delivered.
//
// Per room (channel C, room_channel.hpp), in C's hash slot so that the
// scripts also run on a Redis Cluster (room_key; written {C}:m below for a
// channel without a hash tag of its own):
//   {C}:m  hash: "!epoch" -> the room's epoch, "!top" -> its last offset,
//          <origin hex> -> the last seq published from that origin (a
//          publish sent again after a reconnect is recognised and skipped)
//   {C}:h  stream of the last --history-size messages; entry id
//          <offset>-0, field "m" -> the envelope as published
// Both expire --history-ttl after the room's last publish; an expired or
// lost room starts over at offset 1 with a new epoch.
//
// publish:  KEYS {C}:m {C}:h; ARGV channel, envelope, origin, seq, maxlen,
//           ttl, new epoch. PUBLISHes (SPUBLISHes on a cluster) "fgo <epoch> <offset>\n<envelope>"
//           (room_offset_header.hpp) and returns {PUBLISH's receiver
//           count, offset}, or {-1, 0} for a copy it had already published.
// history:  KEYS {C}:m {C}:h; ARGV new epoch, ttl, after ("" for none),
//           count. Returns {epoch, top, entries}, entries being XRANGE's
//           reply for the offsets above `after` (at most `count`).
#pragma once

#include <random>
#include <string>
#include <string_view>

#include "worker/broker/redis_script.hpp"

namespace fg::worker {

// `sharded`: the variant for a Redis Cluster, which SPUBLISHes.
const redis_script& history_publish_script(bool sharded = false);
const redis_script& history_read_script();

// The keys of the room whose channel is `channel`.
std::string history_meta_key(std::string_view channel);
std::string history_stream_key(std::string_view channel);

// A fresh random epoch: 16 characters of [0-9a-f]. Every publish offers
// one (used only when the room has none), so it must be cheap: a seeded
// generator, not the OS's entropy per call.
std::string new_room_epoch(std::mt19937_64& rng);

}  // namespace fg::worker
