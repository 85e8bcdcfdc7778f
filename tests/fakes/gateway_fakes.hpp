// Fakes for the gateway's seams: a client connection and a worker link.
// They record what the route table asks of them and behave like the real
// ones where the table relies on it (a connection that closes tells its
// sink; a link that closes reports itself lost), so a test can drive the
// table through failover, credits and held closes without a socket.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/byte_buffer.hpp"
#include "common/link/hot_envelopes.hpp"
#include "framegate/link.pb.h"
#include "gateway/net/broadcast_frames.hpp"
#include "gateway/net/connection.hpp"
#include "gateway/net/message_sink.hpp"
#include "gateway/routing/link_port.hpp"

namespace fg::gateway::fakes {

class fake_connection final : public connection {
 public:
  struct received {
    ws::opcode op;
    std::string payload;
  };

  // `sink` hears of the close as it would from a session.
  fake_connection(std::uint64_t id, message_sink& sink) : id_(id), sink_(sink) {}

  [[nodiscard]] std::uint64_t id() const noexcept override { return id_; }
  [[nodiscard]] bool is_open() const noexcept override { return open_; }

  void send(ws::opcode op, std::span<const std::uint8_t> payload) override {
    if (open_) sent.push_back({op, std::string(payload.begin(), payload.end())});
  }
  void send_shared(broadcast_frames& frames) override {
    ++shared_sends;
    send(frames.op(), frames.payload());
  }
  void close(std::uint16_t code, std::string_view reason) override {
    if (!open_) return;
    close_code = code;
    close_reason = std::string(reason);
    leave(code, close_origin::server);
  }
  void resume_reading() override { ++resumes; }
  void release_close() override {
    ++closes_released;
    if (open_) leave(ws::close_code::protocol_error, close_origin::server);
  }

  // The client went away (or sent a close frame).
  void client_closes(std::uint16_t code = ws::close_code::normal) { leave(code, close_origin::client); }
  [[nodiscard]] std::vector<std::string> payloads() const {
    std::vector<std::string> out;
    for (const auto& r : sent) out.push_back(r.payload);
    return out;
  }

  std::vector<received> sent;
  std::uint16_t close_code = 0;
  std::string close_reason;
  int resumes = 0;
  int closes_released = 0;
  int shared_sends = 0;  // of `sent`, those framed once for many recipients

 private:
  void leave(std::uint16_t code, close_origin origin) {
    open_ = false;
    sink_.on_close(*this, code, origin);
  }

  std::uint64_t id_;
  message_sink& sink_;
  bool open_ = true;
};

// A worker's link as the table sees it, and the worker's side of it:
// what the gateway sent is recorded (client messages as Message envelopes),
// and the test speaks for the worker with register_as(), ack() and deliver().
class fake_link final : public link_port {
 public:
  explicit fake_link(link_events& events) : events_(events) { events_.on_link_opened(*this); }
  ~fake_link() override { close("test over"); }
  fake_link(const fake_link&) = delete;
  fake_link& operator=(const fake_link&) = delete;

  void send(const framegate::link::Envelope& e) override {
    if (!closed_) received.push_back(e);
  }
  stored_payload send_message(std::uint64_t conn_id, bool binary, std::span<const std::uint8_t> payload,
                              std::uint64_t seq) override {
    // As a real link: the payload is kept in the link's output, closed or not.
    const std::size_t at = stored_->size();
    stored_->append(payload);
    if (closed_) return {stored_, at};
    framegate::link::Envelope e;
    auto* m = e.mutable_message();
    m->set_conn_id(conn_id);
    m->set_binary(binary);
    m->set_payload(std::string(payload.begin(), payload.end()));
    m->set_seq(seq);
    received.push_back(std::move(e));
    return {stored_, at};
  }
  [[nodiscard]] std::size_t pending_bytes() const noexcept override { return backlog; }
  void close(std::string_view why) override {
    if (closed_) return;
    closed_ = true;
    close_reason = std::string(why);
    events_.on_link_lost(*this, why);
  }

  // The worker's side: one envelope, then the end of the read that carried
  // it. A Send goes the way worker_link reads it: in place, unless the fast
  // reader declines its bytes (deliver_parsed forces the other way).
  void deliver(const framegate::link::Envelope& e) {
    const std::string bytes = e.SerializeAsString();
    if (const auto send =
            fg::link::send_view::parse({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}))
      events_.on_link_send(*this, *send);
    else
      events_.on_link_envelope(*this, e);
    events_.on_link_batch_end();
  }
  // The envelope as parsed by the generated code (a declined Send's way).
  void deliver_parsed(const framegate::link::Envelope& e) {
    events_.on_link_envelope(*this, e);
    events_.on_link_batch_end();
  }
  void register_as(const std::string& worker_id, const std::vector<std::string>& paths,
                   std::uint32_t max_envelope = 0) {
    framegate::link::Envelope e;
    auto* r = e.mutable_register_();
    r->set_worker_id(worker_id);
    for (const auto& p : paths) r->add_paths(p);
    r->set_max_envelope(max_envelope);
    deliver(e);
  }
  void ack(std::uint64_t seq) {
    framegate::link::Envelope e;
    e.mutable_ack()->set_seq(seq);
    deliver(e);
  }

  // What the gateway sent, of one kind, in order.
  [[nodiscard]] std::vector<framegate::link::Envelope> of(framegate::link::Envelope::BodyCase kind) const {
    std::vector<framegate::link::Envelope> out;
    for (const auto& e : received)
      if (e.body_case() == kind) out.push_back(e);
    return out;
  }
  [[nodiscard]] std::vector<framegate::link::Message> messages() const {
    std::vector<framegate::link::Message> out;
    for (const auto& e : of(framegate::link::Envelope::kMessage)) out.push_back(e.message());
    return out;
  }
  [[nodiscard]] std::vector<framegate::link::ConnectionOpened> opened() const {
    std::vector<framegate::link::ConnectionOpened> out;
    for (const auto& e : of(framegate::link::Envelope::kOpened)) out.push_back(e.opened());
    return out;
  }
  [[nodiscard]] bool closed() const noexcept { return closed_; }

  std::vector<framegate::link::Envelope> received;
  std::string close_reason;
  std::size_t backlog = 0;  // what pending_bytes() reports: output the worker has not read

 private:
  link_events& events_;
  std::shared_ptr<byte_buffer> stored_ = std::make_shared<byte_buffer>();  // every payload sent, in order
  bool closed_ = false;
};

inline request_info request(std::string path, std::string remote_address = "198.18.0.1") {
  request_info info;
  info.path = std::move(path);
  info.remote_address = std::move(remote_address);
  return info;
}

inline std::span<const std::uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace fg::gateway::fakes
