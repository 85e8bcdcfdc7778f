#pragma once
// The fixed layout of a rooms run (see rooms.hpp), derived once from the
// options: who is a member of which room, who publishes where, and the exact
// bytes of joins, publishes and deliveries.
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"

namespace loadgen {

struct layout {
  std::uint32_t rooms = 1, members = 0, publishers = 0;
  bool publishers_join = true;
  std::uint32_t connections = 0;
  std::vector<std::uint32_t> room_size;      // members per room
  std::vector<std::string> delivery_prefix;  // {"room":"r<k>","data":{"t":
  std::vector<std::string> publish_prefix;   // {"op":"publish","room":"r<k>","data":{"t":
  std::vector<std::string> join_text;        // {"op":"join","room":"r<k>"}
  // After the seq: }}, or with --publish-size ,"x":[...]}} in one of
  // payload_variants() versions, picked by the seq.
  std::vector<std::string> data_tails;
  const std::string& tail_of(std::uint64_t seq) const { return data_tails[seq % data_tails.size()]; }

  bool is_member(std::uint32_t i) const { return i < members; }
  bool is_publisher(std::uint32_t i) const { return publishers_join ? i < publishers : i >= members; }
  std::uint32_t pub_id(std::uint32_t i) const { return publishers_join ? i : i - members; }
  std::uint32_t room_of(std::uint32_t i) const { return is_member(i) ? i % rooms : pub_id(i) % rooms; }
  std::uint32_t room_of_pub(std::uint64_t p) const { return static_cast<std::uint32_t>(p % rooms); }
};

// Needs publishers <= members when publishers join (checked by the caller).
layout make_layout(const options& opts);

}  // namespace loadgen
