// Which Redis Cluster shard owns a room's channel, known from what the
// cluster says about itself. A cluster broker publishes and subscribes
// (SPUBLISH/SSUBSCRIBE) on the primary that owns the channel's hash slot;
// it learns the owners from CLUSTER SHARDS (Redis 7) or CLUSTER SLOTS,
// and is told of a move by a MOVED or ASK error.
//
// Everything here is pure: the replies come from hiredis (a redisReply is
// plain data), nothing connects. A reply is the cluster's word, not
// ours, so a bad one gives a one-line error, never an exception or an
// assert.
//
// Addresses: an empty host means "the host the reply came from" (Redis
// sends a NULL or "?" endpoint when a node does not know how it is
// reached, and MOVED ":7000" for the same).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <hiredis/hiredis.h>

namespace fg::worker {

// Redis Cluster's key space: a key belongs to slot CRC16(key) mod 16384.
inline constexpr std::size_t cluster_slot_count = 16384;

// CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection): the
// checksum of Redis Cluster's key hashing (cluster spec, appendix A).
std::uint16_t crc16_xmodem(std::string_view bytes) noexcept;

// The slot of `key`. When the key holds a '{' followed later by a '}' with
// at least one byte between them, only the bytes between the first '{'
// and the first '}' after it are hashed (a "hash tag": "{room}:a" and
// "{room}:b" share a slot); otherwise the whole key is.
std::uint16_t key_hash_slot(std::string_view key) noexcept;

struct cluster_node {
  std::string host;  // empty: the host the reply came from
  std::uint16_t port = 0;
  std::string id;  // 40 hex digits from the cluster; empty when not told

  bool operator==(const cluster_node&) const = default;
  // Where to connect; a broker keys its connections by this.
  [[nodiscard]] bool same_address(const cluster_node& other) const noexcept {
    return port == other.port && host == other.host;
  }
};

struct cluster_shard {
  cluster_node primary;  // where SPUBLISH and SSUBSCRIBE go
  std::vector<cluster_node> replicas;

  bool operator==(const cluster_shard&) const = default;
};

// The owner of every slot: the shards that own at least one slot, and a
// table from slot to shard. A slot may be unassigned (no shard claims it,
// or its shard has no healthy primary); the map is then not complete().
class slot_map {
 public:
  slot_map();

  // Adds a shard that owns no slot yet; returns its index for assign().
  std::size_t add_shard(cluster_shard shard);
  // Gives slots first..last (inclusive) to shard `shard_index`. False, and
  // nothing assigned, when the range or the index is out of bounds or a
  // slot in it already has an owner.
  [[nodiscard]] bool assign(std::size_t first, std::size_t last, std::size_t shard_index);

  // Null when `slot` is unassigned or not below cluster_slot_count.
  [[nodiscard]] const cluster_shard* owner(std::size_t slot) const noexcept;
  [[nodiscard]] const cluster_shard* owner_of_key(std::string_view key) const noexcept {
    return owner(key_hash_slot(key));
  }
  [[nodiscard]] std::span<const cluster_shard> shards() const noexcept { return shards_; }
  [[nodiscard]] std::size_t assigned_slots() const noexcept { return assigned_; }
  // Every slot has an owner.
  [[nodiscard]] bool complete() const noexcept { return assigned_ == cluster_slot_count; }

  // Slots a shard claims though it has no healthy primary (a failover under
  // way): unassigned, but the node that answered knows who holds them.
  void add_unserved(std::size_t slots) noexcept { unserved_ += slots; }
  // Slots nobody claims in this map: the answering node knows no holder
  // (another node may: this one lost a slot, or was never told).
  [[nodiscard]] std::size_t unclaimed_slots() const noexcept {
    return assigned_ + unserved_ >= cluster_slot_count ? 0 : cluster_slot_count - assigned_ - unserved_;
  }

  // Both maps send `slot` to a primary at the same address, or both leave
  // it unassigned. Replicas and node ids do not count: a room needs to move
  // only when its primary's address changes.
  [[nodiscard]] bool same_owner(const slot_map& other, std::size_t slot) const noexcept;

 private:
  static constexpr std::uint16_t unassigned = 0xFFFF;

  std::vector<cluster_shard> shards_;
  std::vector<std::uint16_t> shard_of_slot_;  // cluster_slot_count entries
  std::size_t assigned_ = 0;
  std::size_t unserved_ = 0;
};

// The slots whose owner differs between two maps (not same_owner), in
// increasing order: the rooms hashed to them move to another connection.
std::vector<std::uint16_t> moved_slots(const slot_map& before, const slot_map& after);

// A parsed CLUSTER SHARDS or CLUSTER SLOTS reply: the map, or what was
// wrong with the reply.
struct slot_map_reply {
  std::optional<slot_map> map;
  std::string error;  // one line, set when `map` is not
};

// CLUSTER SHARDS (Redis >= 7.0). RESP2 layout, each "map" a flat array of
// name/value pairs (unknown names are ignored):
//
//   [ shard: { "slots": [start, end, start, end, ...],
//              "nodes": [ { "id", "port", "ip", "endpoint", "hostname",
//                           "role", "replication-offset", "health", ... } ] } ]
//
// A shard's primary is its node with role "master" and health "online";
// its replicas, those with role "replica" and health "online". A node's
// host is its "endpoint", or its "ip" when the endpoint is "?" or empty.
// A shard without a healthy primary leaves its slots unassigned; one
// owning no slot is left out.
slot_map_reply parse_cluster_shards(const redisReply& reply);

// CLUSTER SLOTS (any Redis Cluster):
//
//   [ [start, end, [endpoint, port, id, {metadata}], replica..., ], ... ]
//
// The first node owns the range; the others are its replicas. Ranges with
// the same primary make one shard. CLUSTER SLOTS tells no health: a failed
// primary is still listed (CLUSTER SHARDS is the better source).
slot_map_reply parse_cluster_slots(const redisReply& reply);

// A cluster redirect: the error of a command sent to a node that does not
// serve its slot (cluster spec, "Redirection and resharding"):
//
//   MOVED <slot> <host>:<port>   the slot lives there now: refresh the map
//   ASK <slot> <host>:<port>     this one command: ASKING, then retry there
//
// The port follows the last ':' (IPv6 hosts are not bracketed); an empty
// host means the host the command was sent to.
struct cluster_redirect {
  enum class kind : std::uint8_t { moved, ask };
  kind what = kind::moved;
  std::uint16_t slot = 0;
  std::string host;
  std::uint16_t port = 0;

  bool operator==(const cluster_redirect&) const = default;
};

// Nullopt unless `error_text` (a redisReply's str, without the leading
// '-') is exactly one of the two forms above.
std::optional<cluster_redirect> parse_redirect(std::string_view error_text);

}  // namespace fg::worker
