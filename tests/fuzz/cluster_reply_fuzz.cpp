// Fuzzes what a cluster broker makes of Redis Cluster's answers: every
// reply hiredis reads from the input goes through the CLUSTER SHARDS and
// CLUSTER SLOTS parsers, and every string or error in it through the
// MOVED/ASK parser and the key slot. A parser gives a map or a one-line
// error, never both; a map's table agrees with its shards; a redirect
// prints back to the same text; key slots match a plain bitwise CRC16
// and Redis's own hash-tag loop.
//
// Input: RESP2 bytes, any number of replies one after another.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <hiredis/hiredis.h>

#include "tests/fuzz/check.hpp"
#include "worker/broker/cluster_slots.hpp"

using fg::fuzz::check;
namespace fw = fg::worker;

namespace {

// hiredis 0.14 allocates an array's element pointers as soon as it reads
// "*<count>", before any element arrives: a count larger than the input
// could ever fill only measures the allocator.
bool counts_fit(std::string_view bytes) {
  for (std::size_t at = bytes.find('*'); at != std::string_view::npos; at = bytes.find('*', at + 1)) {
    std::size_t count = 0;
    for (std::size_t i = at + 1; i < bytes.size() && bytes[i] >= '0' && bytes[i] <= '9'; ++i) {
      count = count * 10 + static_cast<std::size_t>(bytes[i] - '0');
      if (count > bytes.size()) return false;
    }
  }
  return true;
}

std::uint16_t bitwise_crc16(std::string_view bytes) {
  unsigned crc = 0;
  for (const char c : bytes) {
    crc ^= static_cast<unsigned>(static_cast<unsigned char>(c)) << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
  }
  return static_cast<std::uint16_t>(crc);
}

// keyHashSlot() of Redis's cluster.c, loop for loop.
std::uint16_t reference_slot(std::string_view key) {
  std::size_t s = 0;
  while (s < key.size() && key[s] != '{') ++s;
  if (s == key.size()) return bitwise_crc16(key) & 0x3FFF;
  std::size_t e = s + 1;
  while (e < key.size() && key[e] != '}') ++e;
  if (e == key.size() || e == s + 1) return bitwise_crc16(key) & 0x3FFF;
  return bitwise_crc16(key.substr(s + 1, e - s - 1)) & 0x3FFF;
}

void check_map(const fw::slot_map_reply& r, std::string_view command) {
  check(r.map.has_value() == r.error.empty());
  if (!r.map) {
    check(r.error.starts_with(command) && r.error.find('\n') == std::string::npos);
    return;
  }
  const fw::slot_map& map = *r.map;
  const auto shards = map.shards();
  std::size_t assigned = 0;
  std::string owns(shards.size(), '\0');
  for (std::size_t slot = 0; slot < fw::cluster_slot_count; ++slot) {
    const fw::cluster_shard* owner = map.owner(slot);
    if (owner == nullptr) continue;
    ++assigned;
    check(owner >= shards.data() && owner < shards.data() + shards.size());
    owns[static_cast<std::size_t>(owner - shards.data())] = 1;
  }
  check(assigned == map.assigned_slots() && map.complete() == (assigned == fw::cluster_slot_count));
  check(owns.find('\0') == std::string::npos);  // no shard without a slot
  for (const fw::cluster_shard& s : shards) {
    check(s.primary.port != 0);
    for (const fw::cluster_node& n : s.replicas) check(n.port != 0);
  }
  check(map.owner(fw::cluster_slot_count) == nullptr);
  check(fw::moved_slots(map, map).empty());
}

void check_text(std::string_view text) {
  check(fw::key_hash_slot(text) == reference_slot(text));
  const auto redirect = fw::parse_redirect(text);
  if (!redirect) return;
  check(redirect->slot < fw::cluster_slot_count && redirect->port != 0);
  const std::string printed = std::string(redirect->what == fw::cluster_redirect::kind::moved ? "MOVED " : "ASK ") +
                              std::to_string(redirect->slot) + " " + redirect->host + ":" +
                              std::to_string(redirect->port);
  check(printed == text);
}

void check_texts(const redisReply& r) {
  if (r.type == REDIS_REPLY_STRING || r.type == REDIS_REPLY_STATUS || r.type == REDIS_REPLY_ERROR)
    check_text(std::string_view(r.str, r.len));
  if (r.type == REDIS_REPLY_ARRAY)
    for (std::size_t i = 0; i < r.elements; ++i) check_texts(*r.element[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (!counts_fit(bytes)) return 0;
  redisReader* reader = redisReaderCreate();
  redisReaderFeed(reader, bytes.data(), bytes.size());
  void* reply = nullptr;
  while (redisReaderGetReply(reader, &reply) == REDIS_OK && reply != nullptr) {
    const redisReply& r = *static_cast<const redisReply*>(reply);
    const auto shards = fw::parse_cluster_shards(r);
    const auto slots = fw::parse_cluster_slots(r);
    check_map(shards, "CLUSTER SHARDS: ");
    check_map(slots, "CLUSTER SLOTS: ");
    if (shards.map && slots.map) {
      const auto moved = fw::moved_slots(*shards.map, *slots.map);
      for (const std::uint16_t slot : moved) check(!shards.map->same_owner(*slots.map, slot));
      check(fw::moved_slots(*slots.map, *shards.map) == moved);
    }
    check_texts(r);
    freeReplyObject(reply);
    reply = nullptr;
  }
  redisReaderFree(reader);
  return 0;
}
