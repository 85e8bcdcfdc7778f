// One client connection: handshake, then frames in and out.
//
// A session lives on one I/O thread for its whole life. It holds no read
// buffer while idle: it waits for readability, reads into the thread's
// buffer, and the message reader keeps only what a partial message needs.
// Writes are corked: everything sent during one loop turn is written with
// one syscall when the turn ends; what the socket does not take waits in the
// send queue (see send_queue.hpp for the whole write path), bounded by
// --max-send-queue.
//
// Phases: handshake -> open -> closing (our close frame sent, waiting for
// the peer's) -> draining (TCP write side shut, reading until EOF) -> closed.
// A close the client asked for, or a protocol error, may pass through
// `held` first: nothing more is read, but replies to the messages the
// client sent before it still go out (message_sink::hold_close), for at
// most --close-timeout.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "common/byte_buffer.hpp"
#include "common/intrusive_ref.hpp"
#include "gateway/net/connection.hpp"
#include "gateway/net/message_sink.hpp"
#include "gateway/net/send_queue.hpp"
#include "gateway/net/socket_poller.hpp"
#include "gateway/ws/message_reader.hpp"

namespace fg::gateway {

class io_thread;
class broadcast_frames;
struct handshake_state;

using tcp_socket = boost::asio::basic_stream_socket<boost::asio::ip::tcp, boost::asio::io_context::executor_type>;

class session;
// What keeps a session alive: the thread that accepted it until start()
// returns, each pending Asio wait (until the handshake ends), the poller
// while it watches the socket (from then on), a deferred flush. The last
// one deletes it.
using session_ref = intrusive_ref<session>;

// Sessions are counted intrusively rather than with enable_shared_from_this
// (see common/intrusive_ref.hpp): an idle connection pays 4 bytes for its
// count instead of 32 (weak pointer, control block), and 8 for a handle to
// itself instead of 16.
class session final : public connection, public poll_target, public ref_counted<session> {
 public:
  session(io_thread& home, tcp_socket socket);
  ~session() override;
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  void start();

  // Queues one unfragmented message, compressed if permessage-deflate was
  // negotiated and it is large enough. Dropped silently once closing;
  // subject to the send-queue policy when the client does not keep up.
  void send(ws::opcode op, std::span<const std::uint8_t> payload) override;
  // Queues a frame that is already framed carrying a message of `op` with
  // `payload_size` bytes (before compression). Same policy as send().
  void send_framed(std::span<const std::uint8_t> frame, ws::opcode op, std::size_t payload_size);
  // Queues a broadcast: the frame its parameters share with other
  // recipients (framed or compressed once for all), or, with server context
  // takeover, the message compressed with this connection's own context.
  void send_shared(broadcast_frames& frames) override;

  // Starts the close handshake: sends a close frame, waits (bounded) for
  // the client's, then closes TCP.
  void close(std::uint16_t code, std::string_view reason) override;

  [[nodiscard]] std::uint64_t id() const noexcept override { return id_; }
  [[nodiscard]] bool is_open() const noexcept override { return phase_ == phase::open; }
  // Bytes waiting in the backlog (the socket did not take them yet).
  [[nodiscard]] std::size_t queued_bytes() const noexcept { return queue_.queued_bytes(); }

  // Flow control from the sink: a paused session does not read its socket,
  // so TCP pushes back on the client.
  void resume_reading() override;

  // Called by the thread's housekeeping tick: timeouts and heartbeats.
  void on_tick(std::uint64_t now_ms);
  // Called by the thread when it owns the cork: write what was queued.
  void flush(byte_buffer& corked);
  // Called when the cork moves to another session mid-turn (a broadcast):
  // keep the bytes, and write them once at the end of the turn with
  // everything else this session gets in it (flush_deferred).
  void defer(byte_buffer& corked);
  void flush_deferred();
  // The end of the turn in batches (io_thread::write_deferred): the bytes
  // flush_deferred() would write now when they go to the poller's socket,
  // descriptor write_fd(); empty otherwise (flush_deferred() then writes
  // as usual). The batch sends them, and flush_deferred(sent) goes on from
  // the socket's answer, as if its own write had got it.
  [[nodiscard]] std::span<const std::uint8_t> deferred_write() const noexcept;
  [[nodiscard]] int write_fd() const noexcept { return fd_; }
  void flush_deferred(write_result sent);
  // Server shutdown: close 1001, or drop a connection still in its handshake.
  void go_away();
  // Closes TCP at once, without a close handshake.
  void terminate() { abort(); }
  // Ends a close the sink held back (see message_sink::hold_close).
  void release_close() override;

  // poll_target: an edge on the socket, once it is open (socket_poller.hpp).
  void on_poll(std::uint32_t events) override;

  // message_reader callbacks
  void on_message(ws::opcode op, std::span<std::uint8_t> payload);
  void on_ping(std::span<std::uint8_t> payload);
  void on_pong(std::span<std::uint8_t> payload);
  void on_close(std::uint16_t code, std::string_view reason);

 private:
  enum class phase : std::uint8_t { handshake, open, held, closing, draining, closed };
  // What a held close will send once released: the client's own code
  // echoed, or the close code of a protocol error.
  struct held_close {
    std::uint16_t code = 0;
    bool by_client = false;
    ws::error error = ws::error::none;  // not by_client
  };
  // What most connections never use (see session.cpp); allocated on first
  // need and kept until the session ends.
  struct cold_state;
  cold_state& cold();

  void do_read_proxy_header();  // from a --proxy-protocol-from balancer, before the request
  void on_proxy_header(boost::system::error_code ec, std::size_t n);
  void admit_and_read_handshake();
  void do_read_handshake();
  void on_handshake(boost::system::error_code ec);
  void refuse(unsigned status, std::string_view reason, std::uint64_t retry_after_s = 0,
              std::string_view extra_headers = {});
  // With a --jwt-* key: verifies the request's token and fills the user
  // into `info`; false: refused (401).
  bool authenticate(request_info& info);
  bool admit_address();           // --max-connections-per-ip, --handshake-rate; false: refused
  bool admit_forwarded_client();  // --forwarded-for-from: the client its header names; false: refused
  boost::asio::ip::address client_address(boost::system::error_code& ec) const;  // the PROXY header's, else the peer
  // --message-rate / --byte-rate: false if the message is over the rate (and
  // the policy applied: the connection closes, or the message is dropped).
  bool within_rate(std::size_t payload_size);
  void serve_static();                      // --static-dir: answers a plain HTTP request with a file
  void respond(std::string_view response);  // writes an HTTP response, then drains
  void accept(std::string_view response, request_info&& info, std::span<const std::uint8_t> pipelined);

  // At the handshake's end: the socket leaves Asio for the thread's poller.
  bool adopt_socket();
  [[nodiscard]] bool adopted() const noexcept { return fd_ >= 0; }
  tcp_socket& socket() const noexcept;  // Asio's, until adopted (in handshake_)
  void do_wait_read();
  void on_readable(boost::system::error_code ec);
  void consume(std::span<std::uint8_t> bytes);
  // The send queue's writer: one non-blocking write to the socket.
  write_result write_to_socket(std::span<const std::uint8_t> bytes);
  write_result count_written(write_result r);  // the client-write counters of one write
  auto writer() noexcept {
    return [this](std::span<const std::uint8_t> bytes) { return write_to_socket(bytes); };
  }
  void after_write(send_queue::next step);
  void do_wait_write();
  void on_writable(boost::system::error_code ec);

  void send_frame(ws::opcode op, std::span<const std::uint8_t> payload, bool exempt_from_limit,
                  bool compressed = false);
  // Applies the send-queue policy to a frame about to be queued. Every
  // message and pong passes here; the only frames that do not are our own
  // pings (one outstanding at a time) and the one close frame, so nothing
  // a client does can grow its backlog past --max-send-queue by more than
  // a ping and a close.
  enum class frame_kind : std::uint8_t { message, pong };
  bool make_room(std::size_t frame_size, frame_kind kind = frame_kind::message);
  void count_sent(ws::opcode op, std::size_t payload_size);
  request_info make_request_info() const;
  void continue_reading();
  void send_close_frame(std::uint16_t code, std::string_view reason);
  void fail(ws::error e);
  bool hold(held_close what);  // asks the sink to hold this close back; false: close now
  void echo_close(std::uint16_t code);
  void finish();         // shut our side after the backlog drains, then read until EOF
  void shutdown_send();  // FIN once nothing is left to write
  void abort();          // close TCP now
  void leave_open(std::uint16_t code, close_origin origin);

  // Ordered to leave no padding: sizeof(session) is most of an idle
  // connection's memory. This one first, in the 4 bytes after the count.
  std::uint32_t ip_slot_ = 0;  // per_ip_limits slot, when ip_counted_
  io_thread& home_;
  // Asio's socket and the HTTP request until the handshake is done; then
  // the descriptor alone, in fd_, watched by the thread's socket_poller
  // (see its header for why). A socket answered without an upgrade keeps
  // it until closed.
  std::unique_ptr<handshake_state> handshake_;
  ws::message_reader reader_;
  send_queue queue_;
  std::uint64_t id_;
  // Milliseconds of io_thread::now_ms(): 64 bits, so no timeout an option
  // allows can wrap (32-bit milliseconds wrap after 24.8 days).
  std::uint64_t last_rx_ms_ = 0;
  // When the current wait ends: the handshake, the pong of the outstanding
  // ping (open), the replies to a held close, the peer's close frame, EOF.
  // One field serves them all, as no two overlap: the pong's is set when
  // the ping goes out (only while open), and every phase after open sets
  // its own on entry.
  std::uint64_t deadline_ms_ = 0;
  int fd_ = -1;  // see handshake_
  phase phase_ = phase::handshake;
  bool reading_ = false;         // a read is wanted on the next readiness
  bool maybe_readable_ = false;  // adopted: bytes may wait that no edge will announce
  bool write_waiting_ = false;   // adopted: a backlog waits for the socket to take more
  bool peer_gone_ = false;       // adopted: an edge said the peer's end of stream (or an error) came
  bool paused_ = false;
  bool ping_outstanding_ = false;
  bool counted_ = false;  // holds a slot of --max-connections (from the accept on)
  bool write_shut_ = false;
  bool ip_counted_ = false;  // holds a socket of its address's --max-connections-per-ip
  // Null unless permessage-deflate, a token's exp, a held close or a rate
  // limit needs it: a connection without them pays one pointer for all.
  std::unique_ptr<cold_state> cold_;
  // While the poller watches the socket: nothing else keeps the session
  // alive, not even while paused (no read wanted). Only an open session
  // pauses, and it is open only once adopted, so this is all a pause needs.
  session_ref polled_self_;

 public:
  // Intrusive links of the thread's session list.
  session* prev_ = nullptr;
  session* next_ = nullptr;
};

}  // namespace fg::gateway
