#include "worker/metrics/worker_metrics.hpp"

#include "worker/broker/history_lookup.hpp"

#include "common/metrics/exposition.hpp"
#include "common/version.hpp"

namespace fg::worker {

namespace {

using metrics::metric_kind;
constexpr double ns = 1e-9;

void write_apps(metrics::exposition& out, const worker_view& w) {
  out.gauge("framegate_worker_connections", "Client connections this worker serves now.",
            static_cast<double>(w.connections));
  auto opened = out.family("framegate_worker_connections_opened_total",
                           "Connections announced to this worker, by app path.", metric_kind::counter);
  auto handled = out.family("framegate_worker_messages_handled_total", "Client messages handled, by app path.",
                            metric_kind::counter);
  auto errors = out.family("framegate_worker_app_errors_total",
                           "Exceptions that escaped an app (the connection is closed with 1011), by app path.",
                           metric_kind::counter);
  auto latency = out.family("framegate_worker_handler_seconds", "Time an app's on_message took, by app path.",
                            metric_kind::histogram);
  for (const auto& a : w.apps) {
    opened.add(static_cast<double>(a.opened), {{"path", a.path}});
    handled.add(static_cast<double>(a.handled), {{"path", a.path}});
    errors.add(static_cast<double>(a.errors), {{"path", a.path}});
    latency.add(a.handler_ns, ns, {{"path", a.path}});
  }
  out.counter("framegate_worker_connections_resumed_total",
              "Connections moved here from a failed worker, with their kept state.",
              static_cast<double>(w.core.connections_resumed));
  out.counter("framegate_worker_sends_total", "Send envelopes queued to gateways.",
              static_cast<double>(w.core.sends_out));
  out.gauge("framegate_worker_gateway_links", "Links to gateway I/O threads that are up.",
            static_cast<double>(w.links_up));
  out.counter("framegate_worker_link_write_waits_total",
              "Writes to a gateway that the link socket did not take whole: the rest waited for room "
              "(a full --link-sndbuf).",
              static_cast<double>(w.link_write_waits));
  out.counter("framegate_worker_pool_shed_bytes_total",
              "Bytes of inbox payload strings kept for reuse and freed because they sat unused for a whole "
              "--pool-shed-period (after a burst).",
              static_cast<double>(w.core.pool_bytes_shed));
  out.counter("framegate_worker_memory_trims_total",
              "Times freed memory was handed back to the kernel (malloc_trim) once the pool shed, or connections "
              "that left freed, at least 1 MiB.",
              static_cast<double>(w.core.memory_trims));
  out.counter("framegate_worker_turns_deferred_total",
              "Dispatch turns that ended within their budgets with client messages still queued.",
              static_cast<double>(w.core.turns_deferred));
  out.counter("framegate_worker_state_updates_total",
              "StateUpdate envelopes queued to gateways (at most one per connection per turn).",
              static_cast<double>(w.core.state_updates));
}

void write_broker(metrics::exposition& out, const broker_report& b) {
  out.family("framegate_worker_broker_up", "1 while the broker can deliver across workers.", metric_kind::gauge)
      .add(b.up ? 1 : 0, {{"broker", b.kind}});
  out.counter("framegate_worker_broker_publishes_total", "Publishes made by this worker's apps.",
              static_cast<double>(b.publishes));
  out.counter("framegate_worker_broker_deliveries_total", "Room messages delivered to this worker's apps.",
              static_cast<double>(b.deliveries));
  if (b.publish_ns != nullptr)
    out.histogram("framegate_worker_broker_publish_seconds", "Redis PUBLISH round trip (written to acknowledged).",
                  *b.publish_ns, ns);
  out.counter("framegate_worker_broker_buffered_total",
              "Publishes that waited in the outbox because Redis was unreachable.", static_cast<double>(b.buffered));
  out.counter("framegate_worker_broker_dropped_total",
              "Publishes no other host will get: outbox overflow during an outage, or refused.",
              static_cast<double>(b.dropped));
  out.counter("framegate_worker_broker_missed_total",
              "Buffered publishes sent after an outage to fewer subscribers than before it.",
              static_cast<double>(b.missed));
  out.counter("framegate_worker_broker_gap_messages_total",
              "Numbered room messages that never arrived here live (offsets skipped); members recover them with "
              "since.",
              static_cast<double>(b.gaps));
  out.counter("framegate_worker_broker_refilled_messages_total",
              "Numbered room messages published while this worker resubscribed, delivered from the room's "
              "history once its subscription was back.",
              static_cast<double>(b.refilled));
  out.counter("framegate_worker_broker_refill_held_messages_total",
              "Live room messages that arrived while their room's refill was reading the history, delivered "
              "behind it (or dropped as copies of what it brought).",
              static_cast<double>(b.refill_held));
  out.gauge("framegate_worker_broker_outbox", "Publishes waiting for Redis now.", static_cast<double>(b.outbox));
  out.counter("framegate_worker_broker_reconnects_total", "Broker connections re-established.",
              static_cast<double>(b.reconnects));
  out.counter("framegate_worker_broker_stale_connections_removed_total",
              "Earlier broker connections that a network failure left on Redis (with their subscriptions), "
              "removed with CLIENT KILL once Redis was reached again.",
              static_cast<double>(b.stale_removed));
  out.counter("framegate_worker_broker_resubscribes_total", "Rooms subscribed again after a reconnect.",
              static_cast<double>(b.resubscribes));
  out.counter("framegate_worker_broker_duplicates_total",
              "Copies of a publish skipped because they were already delivered.", static_cast<double>(b.duplicates));
  out.counter("framegate_worker_broker_held_publishes_total",
              "Numbered publishes held until their room's new subscription here was acknowledged, so that this "
              "worker's members get them through it.",
              static_cast<double>(b.held_publishes));
  out.counter("framegate_worker_broker_deflated_publishes_total",
              "Publishes compressed once here that crossed Redis with their compression (--publish-deflate).",
              static_cast<double>(b.deflated_publishes));
  out.counter("framegate_worker_broker_deflated_deliveries_total",
              "Room messages from Redis that came with their publisher's compression, handed to the apps.",
              static_cast<double>(b.deflated_deliveries));
  out.counter("framegate_worker_broker_foreign_total",
              "Messages without the framegate header delivered as they are (--redis-foreign deliver).",
              static_cast<double>(b.foreign));
  auto rejected = out.family("framegate_worker_broker_rejected_total",
                             "Messages from Redis dropped before delivery, by reason (too_big, invalid_utf8, foreign, "
                             "forged_seq).",
                             metric_kind::counter);
  for (std::size_t i = 0; i < inbound_reject_count; ++i)
    rejected.add(static_cast<double>(b.rejected[i]), {{"reason", inbound_reject_name(static_cast<inbound_reject>(i))}});
  auto history = out.family("framegate_worker_history_requests_total",
                            "Room history reads (joins with recover or since), by outcome.", metric_kind::counter);
  for (std::size_t i = 0; i < history_outcome_count; ++i)
    history.add(static_cast<double>(b.history[i]),
                {{"outcome", history_outcome_name(static_cast<room_history::outcome>(i))}});
  out.counter("framegate_worker_history_recovered_messages_total",
              "Messages delivered to clients by recoveries (joins with since).",
              static_cast<double>(b.history_recovered));
  out.gauge("framegate_worker_history_messages",
            "Messages kept in the history of the rooms this worker is subscribed to: min(top offset seen, "
            "--history-size) per room.",
            static_cast<double>(b.history_messages));
  out.gauge("framegate_worker_presence_connections",
            "Connections this worker counts in room presence (summed over rooms and users).",
            static_cast<double>(b.presence_connections));
  out.counter("framegate_worker_presence_reads_total", "Presence ops answered from Redis.",
              static_cast<double>(b.presence_reads));
  out.gauge("framegate_worker_rooms", "Rooms with members on this worker.", static_cast<double>(b.rooms));
  out.gauge("framegate_worker_broker_subscriptions", "Broker channels (rooms) this worker is subscribed to.",
            static_cast<double>(b.subscriptions));
  out.gauge("framegate_worker_redis_cluster_shards",
            "Redis Cluster primaries this worker has connections to (0 without --redis-cluster).",
            static_cast<double>(b.cluster_shards));
  out.counter("framegate_worker_redis_cluster_map_refreshes_total", "Redis Cluster slot maps read (CLUSTER SHARDS).",
              static_cast<double>(b.cluster_map_refreshes));
  out.gauge("framegate_worker_redis_cluster_slots_unmapped",
            "Redis Cluster slots without a primary in the slot map this worker uses (0 when complete, and "
            "without --redis-cluster).",
            static_cast<double>(b.cluster_slots_unmapped));
  out.counter("framegate_worker_redis_cluster_redirects_total",
              "Redis Cluster answers MOVED, ASK, TRYAGAIN or CLUSTERDOWN (the slot map was out of date).",
              static_cast<double>(b.cluster_redirects));
  out.counter("framegate_worker_redis_cluster_rooms_moved_total",
              "Room subscriptions moved to another shard (a slot migrated, a primary failed over).",
              static_cast<double>(b.cluster_rooms_moved));
}

}  // namespace

std::string render_worker_metrics(const worker_view& w) {
  metrics::exposition out;
  write_apps(out, w);
  write_broker(out, w.broker);
  out.process_metrics("worker", version, w.id);
  return out.text();
}

}  // namespace fg::worker
