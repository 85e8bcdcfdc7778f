#include "worker/broker/gateway_hub_broker.hpp"

namespace fg::worker {

void gateway_hub_broker::subscribe(std::string_view room) {
  if (wanted_.emplace(room).second) touch(room);
}

void gateway_hub_broker::unsubscribe(std::string_view room) {
  if (wanted_.erase(std::string(room)) > 0) touch(room);
}

void gateway_hub_broker::touch(std::string_view room) {
  touched_.emplace_back(room);
  if (flush_pending_) return;
  flush_pending_ = true;
  port_.at_end_of_turn([this] { flush_changes(); });
}

void gateway_hub_broker::flush_changes() {
  flush_pending_ = false;
  if (touched_.empty()) return;
  if (!port_.hub_ready()) {
    // on_hub_up will send the whole wanted set.
    touched_.clear();
    return;
  }
  auto* m = subscribe_env_.mutable_broker_subscribe();
  m->clear_subscribe();
  m->clear_unsubscribe();
  for (const std::string& room : touched_) {
    const bool want = wanted_.contains(room);
    const bool told = announced_.contains(room);
    if (want && !told) {
      m->add_subscribe(room);
      announced_.insert(room);
    } else if (!want && told) {
      m->add_unsubscribe(room);
      announced_.erase(room);
    }
  }
  touched_.clear();
  if (m->subscribe_size() == 0 && m->unsubscribe_size() == 0) return;
  ++stats_.subscribe_envelopes;
  port_.send_to_hub(subscribe_env_);
}

void gateway_hub_broker::publish(std::string_view room, std::string_view payload) { send_publish(room, payload, 0); }

void gateway_hub_broker::send_publish(std::string_view room, std::string_view payload, std::size_t stable_prefix) {
  ++stats_.publishes;
  if (!port_.hub_ready()) {
    ++stats_.publishes_dropped;
    return;
  }
  flush_changes();
  auto* m = publish_env_.mutable_broker_publish();
  m->set_room(room.data(), room.size());
  m->set_payload(payload.data(), payload.size());
  const deflated_segment pre = compressor_.compress(payload, stable_prefix);
  m->set_deflated_prefix(pre.bytes.data(), pre.bytes.size());
  m->set_deflated_covers(pre.covers);
  if (pre.present()) ++stats_.deflated_publishes;
  port_.send_to_hub(publish_env_);
}

broker_report gateway_hub_broker::report() const {
  broker_report r;
  r.kind = "hub";
  r.up = port_.hub_ready();
  r.publishes = stats_.publishes;
  r.deliveries = stats_.deliveries;
  r.dropped = stats_.publishes_dropped;
  r.deflated_publishes = stats_.deflated_publishes;
  r.deflated_deliveries = stats_.deflated_deliveries;
  r.rooms = wanted_.size();
  r.subscriptions = r.up ? announced_.size() : 0;
  r.history[static_cast<std::size_t>(room_history::outcome::off)] = stats_.history_requests;
  return r;
}

void gateway_hub_broker::publish(std::string_view room, std::string_view payload, publish_options options) {
  const std::uint64_t dropped = stats_.publishes_dropped;
  send_publish(room, payload, options.stable_prefix);
  if (!options.done) return;
  if (stats_.publishes_dropped == dropped)
    options.done(publish_receipt{});
  else
    options.done(publish_receipt{false, 0, "the gateway hub is not reachable (link 0 is down)"});
}

void gateway_hub_broker::history(std::string_view, const std::optional<history_since>&,
                                 std::function<void(room_history)> done) {
  ++stats_.history_requests;
  done(room_history{});
}

void gateway_hub_broker::on_hub_up() {
  announced_.clear();
  touched_.clear();
  if (wanted_.empty()) return;
  auto* m = subscribe_env_.mutable_broker_subscribe();
  m->clear_subscribe();
  m->clear_unsubscribe();
  for (const std::string& room : wanted_) {
    m->add_subscribe(room);
    announced_.insert(room);
  }
  ++stats_.subscribe_envelopes;
  port_.send_to_hub(subscribe_env_);
}

void gateway_hub_broker::on_hub_down() {
  announced_.clear();
  touched_.clear();
}

void gateway_hub_broker::on_hub_deliver(std::string_view room, std::string_view payload, deflated_segment pre) {
  ++stats_.deliveries;
  // A compression that cannot be of this payload goes unused (the
  // gateway then compresses the message itself); the message still goes.
  if (!pre.present() || pre.covers == 0 || pre.covers > payload.size()) pre = {};
  if (pre.present()) ++stats_.deflated_deliveries;
  if (deliver_) deliver_(room, payload, {}, pre);
}

}  // namespace fg::worker
