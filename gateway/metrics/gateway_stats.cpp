#include "gateway/metrics/gateway_stats.hpp"

namespace fg::gateway {

namespace {
template <class Array>
void add_all(Array& to, const Array& from) {
  for (std::size_t i = 0; i < to.size(); ++i) to[i] += from[i];
}
}  // namespace

std::string close_code_group::label(std::size_t group) {
  if (group < named) return std::to_string(1000 + group);
  if (group == range_3xxx) return "3xxx";
  if (group == range_4xxx) return "4xxx";
  return "other";
}

void thread_counters::add(const thread_counters& o) {
  connections_opened += o.connections_opened;
  handshakes_refused += o.handshakes_refused;
  add_all(refused_by_status, o.refused_by_status);
  add_all(closed_by_code, o.closed_by_code);
  protocol_errors += o.protocol_errors;
  add_all(errors_by_kind, o.errors_by_kind);
  messages_in += o.messages_in;
  messages_out += o.messages_out;
  add_all(messages_received, o.messages_received);
  add_all(messages_sent, o.messages_sent);
  add_all(payload_received, o.payload_received);
  add_all(payload_sent, o.payload_sent);
  socket_read_bytes += o.socket_read_bytes;
  socket_written_bytes += o.socket_written_bytes;
  socket_writes += o.socket_writes;
  socket_write_calls += o.socket_write_calls;
  write_slices += o.write_slices;
  write_slices_cut += o.write_slices_cut;
  dropped_messages += o.dropped_messages;
  overflow_closes += o.overflow_closes;
  dropped_pongs += o.dropped_pongs;
  handshakes_rate_limited += o.handshakes_rate_limited;
  refused_per_ip += o.refused_per_ip;
  add_all(proxy_headers, o.proxy_headers);
  add_all(forwarded_for, o.forwarded_for);
  add_all(rate_limited, o.rate_limited);
  add_all(auth_refusals, o.auth_refusals);
  auth_expired_closes += o.auth_expired_closes;
  add_all(auth_key_reloads, o.auth_key_reloads);
  pings_sent += o.pings_sent;
  pong_timeouts += o.pong_timeouts;
  accept_backoffs += o.accept_backoffs;
  pool_bytes_shed += o.pool_bytes_shed;
  memory_trims += o.memory_trims;
  add_all(held_closes, o.held_closes);
  add_all(held_close_timeouts, o.held_close_timeouts);
  deflate_connections_opened += o.deflate_connections_opened;
  deflate_connections_closed += o.deflate_connections_closed;
  deflate_messages_in += o.deflate_messages_in;
  deflate_messages_out += o.deflate_messages_out;
  deflate_bytes_in_compressed += o.deflate_bytes_in_compressed;
  deflate_bytes_in_uncompressed += o.deflate_bytes_in_uncompressed;
  deflate_bytes_out_uncompressed += o.deflate_bytes_out_uncompressed;
  deflate_bytes_out_compressed += o.deflate_bytes_out_compressed;
  deflate_skipped += o.deflate_skipped;
  deflate_messages_from_publisher += o.deflate_messages_from_publisher;
  message_size.merge(o.message_size);
  frames_per_read.merge(o.frames_per_read);
  client_turn_ns.merge(o.client_turn_ns);
  receive_wait_ns.merge(o.receive_wait_ns);
}

void routing_counters::add(const routing_counters& o) {
  refused_no_worker += o.refused_no_worker;
  refused_unknown_path += o.refused_unknown_path;
  connections_moved += o.connections_moved;
  messages_replayed += o.messages_replayed;
  credit_pauses += o.credit_pauses;
  closed_no_worker += o.closed_no_worker;
  too_big_for_worker += o.too_big_for_worker;
  link_write_waits += o.link_write_waits;
  add_all(worker_rejected, o.worker_rejected);
  add_all(links_cut, o.links_cut);
  roundtrip_ns.merge(o.roundtrip_ns);
  link_rtt_ns.merge(o.link_rtt_ns);
  envelopes_per_write.merge(o.envelopes_per_write);
  broadcast_recipients.merge(o.broadcast_recipients);
  link_turn_ns.merge(o.link_turn_ns);
}

void admin_counters::count_publish(unsigned status) {
  for (auto& [s, n] : publishes_by_status)
    if (s == status) return (void)++n;
  publishes_by_status.emplace_back(status, 1);
}

}  // namespace fg::gateway
