#include "gateway/metrics/gateway_metrics.hpp"

#include <map>

#include "common/metrics/exposition.hpp"
#include "common/version.hpp"

namespace fg::gateway {

namespace {

using metrics::metric_kind;
constexpr double ns = 1e-9;
constexpr const char* opcode_label[2] = {"text", "binary"};

// A counter family with one sample per reason (an enum's names, in order), labelled `label`.
template <std::size_t N>
void counter_by_reason(metrics::exposition& out, std::string name, std::string help,
                       const std::array<const char*, N>& reasons, const std::array<std::uint64_t, N>& values,
                       const char* label = "reason") {
  auto f = out.family(std::move(name), std::move(help), metric_kind::counter);
  for (std::size_t i = 0; i < N; ++i) f.add(static_cast<double>(values[i]), {{label, reasons[i]}});
}

void by_opcode(metrics::exposition& out, std::string name, std::string help, const std::array<std::uint64_t, 2>& v) {
  auto f = out.family(std::move(name), std::move(help), metric_kind::counter);
  for (std::size_t i = 0; i < 2; ++i) f.add(static_cast<double>(v[i]), {{"opcode", opcode_label[i]}});
}

void write_connections(metrics::exposition& out, const thread_counters& c) {
  std::uint64_t closed = 0;
  for (const auto n : c.closed_by_code) closed += n;
  out.gauge("framegate_gateway_connections_active", "WebSocket connections open now (handshake done, not yet closed).",
            static_cast<double>(c.connections_opened - closed));
  out.counter("framegate_gateway_connections_opened_total", "Handshakes accepted.",
              static_cast<double>(c.connections_opened));
  auto f = out.family("framegate_gateway_connections_closed_total",
                      "Connections ended, by the close code sent or received (1006: TCP died).", metric_kind::counter);
  for (std::size_t g = 0; g < c.closed_by_code.size(); ++g)
    f.add(static_cast<double>(c.closed_by_code[g]), {{"code", close_code_group::label(g)}});
  auto refused = out.family("framegate_gateway_handshakes_refused_total",
                            "Handshakes answered with an HTTP error, by status.", metric_kind::counter);
  for (std::size_t i = 0; i < c.refused_by_status.size(); ++i) {
    const unsigned status = refusal_status::all[i];
    refused.add(static_cast<double>(c.refused_by_status[i]),
                {{"status", status == 0 ? std::string("other") : std::to_string(status)}});
  }
}

void write_traffic(metrics::exposition& out, const thread_counters& c) {
  by_opcode(out, "framegate_gateway_messages_received_total", "Complete messages received from clients.",
            c.messages_received);
  by_opcode(out, "framegate_gateway_messages_sent_total",
            "Messages queued to clients (a broadcast counts once per recipient).", c.messages_sent);
  by_opcode(out, "framegate_gateway_received_payload_bytes_total",
            "Payload bytes of the messages received (after inflate).", c.payload_received);
  by_opcode(out, "framegate_gateway_sent_payload_bytes_total", "Payload bytes of the messages sent (before deflate).",
            c.payload_sent);
  out.counter("framegate_gateway_socket_read_bytes_total", "Bytes read from client sockets.",
              static_cast<double>(c.socket_read_bytes));
  out.counter("framegate_gateway_socket_written_bytes_total", "Bytes written to client sockets.",
              static_cast<double>(c.socket_written_bytes));
  out.counter("framegate_gateway_socket_writes_total",
              "Send calls to client sockets that took bytes (messages sent per write: the batching).",
              static_cast<double>(c.socket_writes));
  out.counter("framegate_gateway_socket_write_calls_total",
              "System calls that wrote client sockets: one per send, one per io_uring batch of sends "
              "(writes per call: the batching of --io-uring).",
              static_cast<double>(c.socket_write_calls));
  out.counter("framegate_gateway_write_slices_total",
              "Turn-end slices of deferred client writes (a broadcast's) that wrote clients.",
              static_cast<double>(c.write_slices));
  out.counter("framegate_gateway_write_slices_cut_total",
              "Those slices that ran out of time with clients left for the next turn (long fan-outs).",
              static_cast<double>(c.write_slices_cut));
  out.histogram("framegate_gateway_message_size_bytes", "Size of the messages received from clients.", c.message_size);
  out.histogram("framegate_gateway_frames_per_read", "Frames parsed out of one socket read.", c.frames_per_read);
  out.histogram("framegate_gateway_client_turn_seconds",
                "Gateway time for one client socket event: from its read to the end of the writes it caused.",
                c.client_turn_ns, ns);
  out.histogram("framegate_gateway_receive_wait_seconds",
                "Time client data waited in the kernel before the gateway read it (receive timestamp to read).",
                c.receive_wait_ns, ns);
}

void write_errors(metrics::exposition& out, const thread_counters& c, std::uint64_t send_queue_bytes) {
  auto f = out.family("framegate_gateway_protocol_errors_total",
                      "Connections failed for a protocol violation, by named error.", metric_kind::counter);
  for (int k = 1; k < ws::error_kinds; ++k)
    f.add(static_cast<double>(c.errors_by_kind[static_cast<std::size_t>(k)]),
          {{"kind", ws::to_string(static_cast<ws::error>(k))}});
  out.gauge("framegate_gateway_send_queue_bytes", "Bytes waiting in the send backlogs of slow clients.",
            static_cast<double>(send_queue_bytes));
  out.family("framegate_gateway_backpressure_events_total",
             "Times a client's send queue hit --max-send-queue, by what was done.", metric_kind::counter)
      .add(static_cast<double>(c.overflow_closes), {{"action", "closed"}})
      .add(static_cast<double>(c.dropped_messages), {{"action", "dropped"}})
      .add(static_cast<double>(c.dropped_pongs), {{"action", "pong_dropped"}});
  auto limited = out.family("framegate_gateway_rate_limited_total",
                            "Handshakes refused by --handshake-rate (429), and messages past --message-rate or "
                            "--byte-rate, by what was done.",
                            metric_kind::counter);
  limited.add(static_cast<double>(c.handshakes_rate_limited), {{"what", "handshake"}, {"action", "refused"}});
  for (std::size_t w = 0; w < rate_limit_what.size(); ++w)
    for (std::size_t a = 0; a < rate_limit_action.size(); ++a)
      limited.add(static_cast<double>(c.rate_limited[w * 2 + a]),
                  {{"what", rate_limit_what[w]}, {"action", rate_limit_action[a]}});
  out.counter("framegate_gateway_connections_refused_per_ip_total",
              "Sockets refused (429) because their address held --max-connections-per-ip already.",
              static_cast<double>(c.refused_per_ip));
  out.counter("framegate_gateway_pings_sent_total", "Heartbeat pings sent to silent clients.",
              static_cast<double>(c.pings_sent));
  out.counter("framegate_gateway_pong_timeouts_total", "Connections closed (1011) because no frame followed a ping.",
              static_cast<double>(c.pong_timeouts));
  counter_by_reason(out, "framegate_gateway_proxy_headers_total",
                    "PROXY protocol headers from --proxy-protocol-from balancers: a client's address, the "
                    "balancer's own (LOCAL, UNKNOWN), or refused with 400.",
                    proxy_results, c.proxy_headers, "result");
  counter_by_reason(out, "framegate_gateway_forwarded_for_total",
                    "Requests from --forwarded-for-from balancers by what their --forwarded-for-header said: a "
                    "client's address, no header (the balancer is the client), or a hop without a known address "
                    "(the nearest known hop is the client).",
                    forwarded_results, c.forwarded_for, "result");
  out.counter("framegate_gateway_accept_backoffs_total",
              "Times a thread stopped accepting for 100 ms because accept failed (out of file descriptors or "
              "memory); connections queue in the kernel meanwhile.",
              static_cast<double>(c.accept_backoffs));
  out.counter(
      "framegate_gateway_pool_shed_bytes_total",
      "Bytes of pooled buffers and inflaters freed because they sat unused for a whole --pool-shed-period (after a "
      "burst).",
      static_cast<double>(c.pool_bytes_shed));
  out.counter("framegate_gateway_memory_trims_total",
              "Times freed memory was handed back to the kernel (malloc_trim) once the pools shed, or connections "
              "that left freed, at least 1 MiB.",
              static_cast<double>(c.memory_trims));
  counter_by_reason(out, "framegate_gateway_held_closes_total",
                    "Closes held back until the worker acknowledged what the client sent before them.", held_reasons,
                    c.held_closes);
  counter_by_reason(out, "framegate_gateway_held_close_timeouts_total",
                    "Held closes released by --close-timeout before the worker acknowledged.", held_reasons,
                    c.held_close_timeouts);
}

void write_auth(metrics::exposition& out, const thread_counters& c) {
  auto refused =
      out.family("framegate_gateway_auth_refusals_total",
                 "Handshakes refused with 401 by token verification (--jwt-*), by reason.", metric_kind::counter);
  for (const auto e : auth::auth_refusals)
    refused.add(static_cast<double>(c.auth_refusals[auth::refusal_index(e)]), {{"reason", std::string(to_string(e))}});
  out.counter("framegate_gateway_auth_expired_closes_total",
              "Open connections closed with 4001 because their token's exp (plus --jwt-leeway) passed.",
              static_cast<double>(c.auth_expired_closes));
  counter_by_reason(out, "framegate_gateway_auth_key_reloads_total",
                    "Reloads of the --jwt-* keys on SIGHUP, by result (failed: the previous keys stay in use).",
                    key_reload_results, c.auth_key_reloads, "result");
}

void write_deflate(metrics::exposition& out, const thread_counters& c) {
  out.gauge("framegate_gateway_deflate_connections", "Connections with permessage-deflate negotiated (RFC 7692).",
            static_cast<double>(c.deflate_connections_opened - c.deflate_connections_closed));
  out.family("framegate_gateway_deflate_messages_total",
             "Messages inflated (in) or compressed (out; a broadcast compressed once counts once).",
             metric_kind::counter)
      .add(static_cast<double>(c.deflate_messages_in), {{"direction", "in"}})
      .add(static_cast<double>(c.deflate_messages_out), {{"direction", "out"}});
  out.family("framegate_gateway_deflate_uncompressed_bytes_total",
             "Payload bytes of those messages before deflate (out) or after inflate (in).", metric_kind::counter)
      .add(static_cast<double>(c.deflate_bytes_in_uncompressed), {{"direction", "in"}})
      .add(static_cast<double>(c.deflate_bytes_out_uncompressed), {{"direction", "out"}});
  out.family("framegate_gateway_deflate_compressed_bytes_total", "The same messages' payload bytes on the wire.",
             metric_kind::counter)
      .add(static_cast<double>(c.deflate_bytes_in_compressed), {{"direction", "in"}})
      .add(static_cast<double>(c.deflate_bytes_out_compressed), {{"direction", "out"}});
  out.counter("framegate_gateway_deflate_skipped_total",
              "Messages to deflate connections sent uncompressed: below --deflate-threshold, or not smaller "
              "compressed.",
              static_cast<double>(c.deflate_skipped));
  out.counter("framegate_gateway_deflate_publisher_messages_total",
              "Messages sent compressed with the compression their publisher made (worker --publish-deflate), "
              "not compressed here; also counted in framegate_gateway_deflate_messages_total{direction=\"out\"}.",
              static_cast<double>(c.deflate_messages_from_publisher));
}

void write_workers(metrics::exposition& out, std::span<const thread_snapshot> threads, const routing_counters& r) {
  std::map<std::string, worker_row> rows;  // by worker id, summed over threads
  for (const auto& t : threads)
    for (const auto& w : t.workers) {
      auto& row = rows[w.worker];
      row.links += w.links;
      row.connections += w.connections;
      row.routed += w.routed;
      row.credit_pauses += w.credit_pauses;
      row.unacked += w.unacked;
      row.unacked_bytes += w.unacked_bytes;
      row.replay_held_bytes += w.replay_held_bytes;
    }
  std::size_t registered = 0;
  for (const auto& [id, row] : rows) registered += row.links > 0 ? 1 : 0;
  out.gauge("framegate_gateway_workers", "Workers with at least one link up.", static_cast<double>(registered));
  auto links =
      out.family("framegate_gateway_worker_links",
                 "Links up to each known worker (one per gateway I/O thread when healthy).", metric_kind::gauge);
  auto conns = out.family("framegate_gateway_worker_connections", "Client connections routed to each worker now.",
                          metric_kind::gauge);
  auto routed =
      out.family("framegate_gateway_worker_connections_routed_total",
                 "Connections given to each worker (new, or moved there after a failover).", metric_kind::counter);
  auto paused = out.family("framegate_gateway_worker_credit_pauses_total",
                           "Client reads paused because the worker's credits ran out.", metric_kind::counter);
  auto unacked = out.family("framegate_gateway_worker_unacked_messages",
                            "Messages forwarded to each worker and not yet acknowledged.", metric_kind::gauge);
  auto unacked_bytes = out.family("framegate_gateway_worker_unacked_bytes",
                                  "Payload bytes forwarded to each worker and not yet acknowledged (--credit-bytes).",
                                  metric_kind::gauge);
  auto replay_held = out.family("framegate_gateway_worker_replay_held_bytes",
                                "Memory held to replay each worker's unacknowledged messages if it dies: the link "
                                "write blocks their payloads sit in.",
                                metric_kind::gauge);
  for (const auto& [id, row] : rows) {
    links.add(static_cast<double>(row.links), {{"worker", id}});
    conns.add(static_cast<double>(row.connections), {{"worker", id}});
    routed.add(static_cast<double>(row.routed), {{"worker", id}});
    paused.add(static_cast<double>(row.credit_pauses), {{"worker", id}});
    unacked.add(static_cast<double>(row.unacked), {{"worker", id}});
    unacked_bytes.add(static_cast<double>(row.unacked_bytes), {{"worker", id}});
    replay_held.add(static_cast<double>(row.replay_held_bytes), {{"worker", id}});
  }
  out.histogram("framegate_gateway_worker_roundtrip_seconds",
                "Time from a batch of messages leaving for a worker to the worker's acknowledgement.", r.roundtrip_ns,
                ns);
  out.histogram("framegate_gateway_worker_link_rtt_seconds", "Link ping round trip to workers.", r.link_rtt_ns, ns);
  out.histogram("framegate_gateway_link_turn_seconds",
                "Gateway time for one worker link event: from its read to the end of the client writes it caused.",
                r.link_turn_ns, ns);
  out.counter("framegate_gateway_failovers_total", "Connections moved to another worker after theirs died.",
              static_cast<double>(r.connections_moved));
  counter_by_reason(out, "framegate_gateway_worker_envelopes_rejected_total",
                    "Sends and closes from a worker refused for one connection (closed with 1011; the link stays "
                    "up), by reason.",
                    worker_rejections, r.worker_rejected);
  counter_by_reason(out, "framegate_gateway_worker_links_cut_total",
                    "Worker links the gateway closed itself: silent past --link-timeout, not reading its output, "
                    "or from another user (its connections fail over).",
                    link_cutoffs, r.links_cut);
  out.counter("framegate_gateway_messages_too_big_for_worker_total",
              "Client messages closed with 1009 because their worker's --max-envelope cannot carry them.",
              static_cast<double>(r.too_big_for_worker));
  out.counter("framegate_gateway_messages_replayed_total",
              "Unacknowledged messages replayed to a connection's next worker.",
              static_cast<double>(r.messages_replayed));
  out.histogram("framegate_gateway_link_envelopes_per_write", "Envelopes carried by one write to a worker.",
                r.envelopes_per_write);
  out.counter("framegate_gateway_link_write_waits_total",
              "Writes to a worker that its link socket did not take whole: the rest waited for room "
              "(a full --link-sndbuf).",
              static_cast<double>(r.link_write_waits));
  out.histogram("framegate_gateway_broadcast_recipients", "Recipients of one worker Send (framed once for all).",
                r.broadcast_recipients);
}

}  // namespace

std::string render_gateway_metrics(std::span<const thread_snapshot> threads, const admin_counters& admin,
                                   std::string_view gateway_id) {
  thread_counters c;
  routing_counters r;
  std::uint64_t send_queue_bytes = 0;
  bool routing = false;
  for (const auto& t : threads) {
    c.add(t.counters);
    r.add(t.routes);
    send_queue_bytes += t.send_queue_bytes;
    routing = routing || t.routing;
  }
  metrics::exposition out;
  write_connections(out, c);
  write_traffic(out, c);
  write_errors(out, c, send_queue_bytes);
  write_deflate(out, c);
  write_auth(out, c);
  if (routing) write_workers(out, threads, r);
  auto api = out.family("framegate_gateway_api_publishes_total", "POST /api/publish requests, by HTTP status.",
                        metric_kind::counter);
  for (const auto& [status, n] : admin.publishes_by_status)
    api.add(static_cast<double>(n), {{"status", std::to_string(status)}});
  out.process_metrics("gateway", version, gateway_id);
  return out.text();
}

}  // namespace fg::gateway
