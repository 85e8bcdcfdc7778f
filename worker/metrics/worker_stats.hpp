// What a worker counts beyond the dispatcher's and brokers' plain totals:
// per-app counters and the latency histograms. The worker is one thread,
// so these are plain integers read by the scrape on the same loop.
// docs/METRICS.md lists the exported names.
#pragma once

#include <cstdint>
#include <string>

#include "common/metrics/buckets.hpp"
#include "common/metrics/histogram.hpp"
#include "worker/broker/history_lookup.hpp"
#include "worker/broker/inbound_check.hpp"

namespace fg::worker {

// One mounted app.
struct app_stats {
  std::string path;
  std::uint64_t opened = 0;   // connections announced for this path
  std::uint64_t handled = 0;  // client messages handed to on_message
  std::uint64_t errors = 0;   // exceptions that escaped the app
  metrics::histogram handler_ns{metrics::buckets::latency_ns};
};

// A broker's view for /metrics and /readyz (both brokers fill it).
struct broker_report {
  const char* kind = "";  // "redis" | "hub"
  bool up = false;        // can deliver across workers now
  std::uint64_t publishes = 0;
  std::uint64_t deliveries = 0;
  std::uint64_t buffered = 0;
  std::uint64_t dropped = 0;
  std::uint64_t missed = 0;
  std::uint64_t outbox = 0;  // gauge
  std::uint64_t reconnects = 0;
  std::uint64_t stale_removed = 0;  // earlier connections a partition left on Redis, removed
  std::uint64_t resubscribes = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t foreign = 0;  // foreign messages delivered (--redis-foreign deliver)
  // Channel messages dropped unseen, by inbound_reject (inbound_check.hpp);
  // all zero for the hub.
  inbound_reject_counts rejected{};
  // Room history reads, by room_history::outcome; all "off" for the hub
  // (it keeps no history).
  history_outcome_counts history{};
  std::uint64_t history_recovered = 0;     // messages delivered by recoveries
  std::uint64_t history_messages = 0;      // gauge: kept in the history of the rooms subscribed here
  std::uint64_t presence_connections = 0;  // gauge: this worker's share of presence (connections)
  std::uint64_t presence_reads = 0;        // presence ops answered from Redis
  std::uint64_t deflated_publishes = 0;    // publishes that crossed Redis with their compression (--publish-deflate)
  std::uint64_t held_publishes = 0;        // numbered publishes that waited for their room's new subscription
  std::uint64_t deflated_deliveries = 0;   // deliveries that came with their publisher's compression
  std::uint64_t gaps = 0;                  // offsets of subscribed rooms that never arrived (room_tops)
  std::uint64_t refilled = 0;              // missed while resubscribing, delivered from the history
  std::uint64_t refill_held = 0;           // live ones that waited behind their room's refill
  // Redis Cluster only (zero otherwise).
  std::uint64_t cluster_shards = 0;                // gauge: primaries this worker is connected to (or trying)
  std::uint64_t cluster_map_refreshes = 0;         // slot maps read
  std::uint64_t cluster_slots_unmapped = 0;        // gauge: slots without a primary in the map in use
  std::uint64_t cluster_redirects = 0;             // MOVED, ASK, TRYAGAIN, CLUSTERDOWN answers
  std::uint64_t cluster_rooms_moved = 0;           // subscriptions moved to another shard
  std::uint64_t rooms = 0;                         // gauge: rooms with local members
  std::uint64_t subscriptions = 0;                 // gauge: channels subscribed now
  const metrics::histogram* publish_ns = nullptr;  // Redis PUBLISH round trip; null for the hub
};

}  // namespace fg::worker
