#include "worker/broker/cluster_slots.hpp"

#include <array>
#include <charconv>
#include <map>
#include <tuple>
#include <utility>

#include "worker/broker/hash_tag.hpp"

namespace fg::worker {

namespace {

constexpr std::array<std::uint16_t, 256> crc16_table = [] {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    unsigned crc = byte << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
    table[byte] = static_cast<std::uint16_t>(crc);
  }
  return table;
}();

constexpr std::size_t max_slot = cluster_slot_count - 1;

// A decimal number no larger than `max`, written as Redis writes one: no
// sign, no spaces, no leading zero.
template <typename T>
std::optional<T> decimal(std::string_view digits, T max) {
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  T value{};
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || ec != std::errc{} || ptr != end || value > max) return std::nullopt;
  return value;
}

// ---- reading hiredis replies ----------------------------------------------

using reply_list = std::span<redisReply* const>;

// The elements of an array (or, with hiredis >= 1.0 speaking RESP3, a map,
// whose name/value pairs come flat like RESP2's); nullopt for any other type.
std::optional<reply_list> elements_of(const redisReply& r) {
  bool aggregate = r.type == REDIS_REPLY_ARRAY;
#ifdef REDIS_REPLY_MAP
  aggregate = aggregate || r.type == REDIS_REPLY_MAP;
#endif
  if (!aggregate) return std::nullopt;
  if (r.elements == 0) return reply_list{};
  if (r.element == nullptr) return std::nullopt;
  const reply_list list(r.element, r.elements);
  for (const redisReply* e : list)
    if (e == nullptr) return std::nullopt;
  return list;
}

// A bulk or status string; NIL reads as empty where `nil_is_empty`.
std::optional<std::string_view> text_of(const redisReply& r, bool nil_is_empty = false) {
  if (nil_is_empty && r.type == REDIS_REPLY_NIL) return std::string_view{};
  if (r.type != REDIS_REPLY_STRING && r.type != REDIS_REPLY_STATUS) return std::nullopt;
  if (r.str == nullptr) return r.len == 0 ? std::optional<std::string_view>(std::string_view{}) : std::nullopt;
  return std::string_view(r.str, r.len);
}

// An integer reply, or a bulk string of decimal digits, in 0..max.
std::optional<std::size_t> number_of(const redisReply& r, std::size_t max) {
  if (r.type == REDIS_REPLY_INTEGER) {
    if (r.integer < 0 || static_cast<unsigned long long>(r.integer) > max) return std::nullopt;
    return static_cast<std::size_t>(r.integer);
  }
  const auto digits = text_of(r);
  return digits ? decimal<std::size_t>(*digits, max) : std::nullopt;
}

std::optional<std::uint16_t> port_of(const redisReply& r) {
  const auto port = number_of(r, 65535);
  if (!port || *port == 0) return std::nullopt;
  return static_cast<std::uint16_t>(*port);
}

// Gives slots start..end, read from two replies, to `shard`; an error
// message, empty when done.
std::string assign_range(slot_map& map, const redisReply& start, const redisReply& end, std::size_t shard) {
  const auto first = number_of(start, max_slot);
  const auto last = number_of(end, max_slot);
  if (!first || !last) return "a slot is not a number in 0..16383";
  if (*first > *last) return "slot range " + std::to_string(*first) + "-" + std::to_string(*last) + " is reversed";
  if (!map.assign(*first, *last, shard))
    return "slots " + std::to_string(*first) + "-" + std::to_string(*last) + " overlap a range read before";
  return {};
}

slot_map_reply failure(std::string_view command, std::string_view where, std::string_view what) {
  slot_map_reply out;
  out.error = std::string(command) + ": " + std::string(where) + ": " + std::string(what);
  return out;
}

// ---- CLUSTER SHARDS -------------------------------------------------------

struct shard_node {
  cluster_node node;
  bool primary = false;
  bool online = false;
};

// One node's name/value array; an error message when it makes no sense.
std::string read_shard_node(const redisReply& r, shard_node& out) {
  const auto fields = elements_of(r);
  if (!fields || fields->size() % 2 != 0) return "a node is not a name/value array";
  std::string_view ip, endpoint;
  bool has_port = false;
  for (std::size_t i = 0; i < fields->size(); i += 2) {
    const auto name = text_of(*(*fields)[i]);
    if (!name) return "a node field name is not a string";
    const redisReply& value = *(*fields)[i + 1];
    if (*name == "port") {
      const auto port = port_of(value);
      if (!port) return "a node port is not in 1..65535";
      out.node.port = *port;
      has_port = true;
      continue;
    }
    if (*name != "id" && *name != "ip" && *name != "endpoint" && *name != "role" && *name != "health") continue;
    const auto field_text = text_of(value, true);
    if (!field_text) return "node field \"" + std::string(*name) + "\" is not a string";
    if (*name == "id") out.node.id = *field_text;
    if (*name == "ip") ip = *field_text;
    if (*name == "endpoint") endpoint = *field_text;
    if (*name == "role") out.primary = *field_text == "master";
    // Redis 7.0 says "online", "loading" or "fail" (its docs say "failed").
    if (*name == "health") out.online = *field_text == "online";
  }
  if (!has_port) return "a node has no port (TLS-only clusters are not supported)";
  out.node.host = endpoint.empty() || endpoint == "?" ? ip : endpoint;
  return {};
}

// One shard of CLUSTER SHARDS added to `map`; an error message, empty when
// it was added or rightly left out.
std::string read_shard(const redisReply& r, slot_map& map) {
  const auto fields = elements_of(r);
  if (!fields || fields->size() % 2 != 0) return "not a name/value array";
  const redisReply* slots = nullptr;
  const redisReply* nodes = nullptr;
  for (std::size_t i = 0; i < fields->size(); i += 2) {
    const auto name = text_of(*(*fields)[i]);
    if (!name) return "a field name is not a string";
    if (*name == "slots") slots = (*fields)[i + 1];
    if (*name == "nodes") nodes = (*fields)[i + 1];
  }
  const auto ranges = slots != nullptr ? elements_of(*slots) : std::nullopt;
  if (!ranges || ranges->size() % 2 != 0) return "\"slots\" is not an array of start/end pairs";
  const auto node_list = nodes != nullptr ? elements_of(*nodes) : std::nullopt;
  if (!node_list) return "\"nodes\" is not an array";

  std::optional<cluster_shard> shard;
  std::vector<cluster_node> replicas;
  for (const redisReply* n : *node_list) {
    shard_node node;
    if (std::string error = read_shard_node(*n, node); !error.empty()) return error;
    if (!node.online) continue;
    if (node.primary && !shard) shard.emplace().primary = std::move(node.node);
    if (!node.primary) replicas.push_back(std::move(node.node));
  }
  // Without a healthy primary nobody serves the slots: they stay unassigned.
  if (ranges->empty() || !shard) {
    std::size_t unserved = 0;
    for (std::size_t i = 0; i < ranges->size(); i += 2) {
      const auto first = number_of(*(*ranges)[i], max_slot);
      const auto last = number_of(*(*ranges)[i + 1], max_slot);
      if (!first || !last) return "a slot is not a number in 0..16383";
      if (*first <= *last) unserved += *last - *first + 1;
    }
    map.add_unserved(unserved);
    return {};
  }
  shard->replicas = std::move(replicas);
  const std::size_t index = map.add_shard(std::move(*shard));
  for (std::size_t i = 0; i < ranges->size(); i += 2)
    if (std::string error = assign_range(map, *(*ranges)[i], *(*ranges)[i + 1], index); !error.empty()) return error;
  return {};
}

// ---- CLUSTER SLOTS --------------------------------------------------------

// [endpoint, port, id, {metadata}]; an error message when it makes no sense.
std::string read_slots_node(const redisReply& r, cluster_node& out) {
  const auto parts = elements_of(r);
  if (!parts || parts->size() < 2) return "a node is not [endpoint, port, ...]";
  const auto endpoint = text_of(*(*parts)[0], true);
  if (!endpoint) return "a node endpoint is not a string";
  const auto port = port_of(*(*parts)[1]);
  if (!port) return "a node port is not in 1..65535";
  out.port = *port;
  if (parts->size() > 2) {
    const auto id = text_of(*(*parts)[2], true);
    if (!id) return "a node id is not a string";
    out.id = *id;
  }
  out.host = *endpoint;
  // With an unknown endpoint ("?"), the metadata may still tell the ip.
  if (out.host == "?") out.host.clear();
  const auto metadata = parts->size() > 3 ? elements_of(*(*parts)[3]) : std::nullopt;
  if (out.host.empty() && metadata && metadata->size() % 2 == 0) {
    for (std::size_t i = 0; i < metadata->size(); i += 2) {
      const auto name = text_of(*(*metadata)[i]);
      const auto value = text_of(*(*metadata)[i + 1]);
      if (name && value && *name == "ip") out.host = *value;
    }
  }
  return {};
}

}  // namespace

std::uint16_t crc16_xmodem(std::string_view bytes) noexcept {
  std::uint16_t crc = 0;
  for (const char c : bytes)
    crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_table[((crc >> 8) ^ static_cast<unsigned char>(c)) & 0xFF]);
  return crc;
}

std::uint16_t key_hash_slot(std::string_view key) noexcept {
  return static_cast<std::uint16_t>(crc16_xmodem(hashed_part(key)) & max_slot);
}

slot_map::slot_map() : shard_of_slot_(cluster_slot_count, unassigned) {}

std::size_t slot_map::add_shard(cluster_shard shard) {
  shards_.push_back(std::move(shard));
  return shards_.size() - 1;
}

bool slot_map::assign(std::size_t first, std::size_t last, std::size_t shard_index) {
  if (first > last || last > max_slot || shard_index >= shards_.size() || shard_index >= unassigned) return false;
  for (std::size_t slot = first; slot <= last; ++slot)
    if (shard_of_slot_[slot] != unassigned) return false;
  for (std::size_t slot = first; slot <= last; ++slot) shard_of_slot_[slot] = static_cast<std::uint16_t>(shard_index);
  assigned_ += last - first + 1;
  return true;
}

const cluster_shard* slot_map::owner(std::size_t slot) const noexcept {
  if (slot > max_slot || shard_of_slot_[slot] == unassigned) return nullptr;
  return &shards_[shard_of_slot_[slot]];
}

bool slot_map::same_owner(const slot_map& other, std::size_t slot) const noexcept {
  const cluster_shard* mine = owner(slot);
  const cluster_shard* theirs = other.owner(slot);
  if (mine == nullptr || theirs == nullptr) return mine == theirs;
  return mine->primary.same_address(theirs->primary);
}

std::vector<std::uint16_t> moved_slots(const slot_map& before, const slot_map& after) {
  std::vector<std::uint16_t> moved;
  for (std::size_t slot = 0; slot < cluster_slot_count; ++slot)
    if (!before.same_owner(after, slot)) moved.push_back(static_cast<std::uint16_t>(slot));
  return moved;
}

slot_map_reply parse_cluster_shards(const redisReply& reply) {
  constexpr std::string_view command = "CLUSTER SHARDS";
  const auto shards = elements_of(reply);
  if (!shards) return failure(command, "reply", "not an array");
  slot_map map;
  for (std::size_t i = 0; i < shards->size(); ++i)
    if (std::string error = read_shard(*(*shards)[i], map); !error.empty())
      return failure(command, "shard " + std::to_string(i), error);
  return {std::move(map), {}};
}

slot_map_reply parse_cluster_slots(const redisReply& reply) {
  constexpr std::string_view command = "CLUSTER SLOTS";
  const auto ranges = elements_of(reply);
  if (!ranges) return failure(command, "reply", "not an array");
  slot_map map;
  // Ranges served by the same primary make one shard.
  std::map<std::tuple<std::string, std::uint16_t, std::string>, std::size_t> shard_of_primary;
  for (std::size_t i = 0; i < ranges->size(); ++i) {
    const std::string where = "range " + std::to_string(i);
    const auto parts = elements_of(*(*ranges)[i]);
    if (!parts || parts->size() < 3) return failure(command, where, "not [start, end, primary, replicas...]");
    cluster_shard shard;
    for (std::size_t n = 2; n < parts->size(); ++n) {
      cluster_node node;
      if (std::string error = read_slots_node(*(*parts)[n], node); !error.empty())
        return failure(command, where, error);
      if (n == 2) shard.primary = std::move(node);
      if (n > 2) shard.replicas.push_back(std::move(node));
    }
    const auto key = std::make_tuple(shard.primary.host, shard.primary.port, shard.primary.id);
    auto known = shard_of_primary.find(key);
    if (known == shard_of_primary.end()) known = shard_of_primary.emplace(key, map.add_shard(std::move(shard))).first;
    if (std::string error = assign_range(map, *(*parts)[0], *(*parts)[1], known->second); !error.empty())
      return failure(command, where, error);
  }
  return {std::move(map), {}};
}

std::optional<cluster_redirect> parse_redirect(std::string_view error_text) {
  cluster_redirect out;
  if (error_text.starts_with("MOVED ")) {
    out.what = cluster_redirect::kind::moved;
    error_text.remove_prefix(6);
  } else if (error_text.starts_with("ASK ")) {
    out.what = cluster_redirect::kind::ask;
    error_text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const auto space = error_text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto slot = decimal<std::uint16_t>(error_text.substr(0, space), static_cast<std::uint16_t>(max_slot));
  const std::string_view address = error_text.substr(space + 1);
  const auto colon = address.rfind(':');
  if (!slot || colon == std::string_view::npos) return std::nullopt;
  const std::string_view host = address.substr(0, colon);
  const auto port = decimal<std::uint16_t>(address.substr(colon + 1), 65535);
  if (!port || *port == 0 || host.find(' ') != std::string_view::npos) return std::nullopt;
  out.slot = *slot;
  out.host = host;
  out.port = *port;
  return out;
}

}  // namespace fg::worker
