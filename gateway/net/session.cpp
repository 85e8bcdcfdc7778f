#include "gateway/net/session.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include "common/buffer_pool.hpp"
#include "common/deflate/deflater.hpp"
#include "common/logging.hpp"
#include "common/metrics/elapsed.hpp"
#include "gateway/auth/token_source.hpp"
#include "gateway/http/forwarded_for.hpp"
#include "gateway/http/forwarded_headers.hpp"
#include "gateway/http/handshake.hpp"
#include "gateway/http/proxy_header.hpp"
#include "gateway/http/static_files.hpp"
#include "gateway/limits/token_bucket.hpp"
#include "gateway/net/broadcast_frames.hpp"
#include "gateway/net/forwarded_client.hpp"
#include "gateway/net/io_thread.hpp"
#include "gateway/net/timestamped_read.hpp"
#include "gateway/ws/deflate_options.hpp"
#include "gateway/ws/frame_writer.hpp"
#include "gateway/ws/inflater.hpp"

namespace fg::gateway {

namespace asio = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;

// Lives only until the handshake is done, so an open connection pays
// nothing for Asio's socket (48 bytes) or HTTP parsing.
struct handshake_state {
  handshake_state(tcp_socket s, std::size_t max_header_bytes) : socket(std::move(s)) {
    request.emplace(max_header_bytes);
  }
  tcp_socket socket;
  struct http_request {
    explicit http_request(std::size_t max_header_bytes) : buffer(max_header_bytes + 64 * 1024) {
      parser.header_limit(static_cast<std::uint32_t>(max_header_bytes));
      parser.body_limit(0);
    }
    beast::flat_buffer buffer;
    beast::http::request_parser<beast::http::empty_body> parser;
  };
  // Freed once answered (respond): a socket that gets an HTTP answer
  // instead of an upgrade lingers until the client has read it, at most
  // --close-timeout, and needs its request no more.
  std::optional<http_request> request;
  // The client a trusted balancer's PROXY header or forwarding header
  // named (unset: the peer).
  std::optional<asio::ip::address> client;
  // Set when the request comes from a --forwarded-for-from proxy (this
  // address): its client is named in the request, read before the per-IP
  // checks.
  std::optional<asio::ip::address> forwarding_proxy;
};

tcp_socket& session::socket() const noexcept { return handshake_->socket; }

// Allocated by the first feature that needs it. The hot paths (send,
// on_message) then test one pointer when none is in use.
struct session::cold_state {
  ws::deflate_params deflate{};            // as negotiated in the handshake; allocated then when enabled
  held_close held;                         // while phase held
  std::uint64_t token_expiry_ms = 0;       // the token's exp (plus leeway) on this clock; 0: none
  std::unique_ptr<fg::deflater> deflater;  // server context takeover only, from the first compressed send
  // --message-rate or --byte-rate. Apart: a connection that only compresses
  // does not carry 64 bytes of buckets.
  struct rate_buckets {
    token_bucket messages;
    token_bucket bytes;
  };
  std::unique_ptr<rate_buckets> rates;
};

session::cold_state& session::cold() {
  if (!cold_) cold_ = std::make_unique<cold_state>();
  return *cold_;
}

namespace {
constexpr ws::deflate_params no_deflate{};
bool due(std::uint64_t now, std::uint64_t deadline) { return now >= deadline; }
std::uint64_t ms(std::chrono::milliseconds d) { return static_cast<std::uint64_t>(d.count()); }
// A connection never leaves its thread, so its reader always borrows from
// the same pools.
ws::reader_pools thread_pools() { return {buffer_pool::this_thread(), ws::inflater_pool::this_thread()}; }
}  // namespace

session::session(io_thread& home, tcp_socket socket)
    : home_(home),
      handshake_(std::make_unique<handshake_state>(std::move(socket), home.config().max_header_bytes)),
      id_(home.shared().next_session_id.fetch_add(1)) {
  home_.add(*this);
}

session::~session() {
  if (adopted()) {  // only if the thread ended without aborting it
    home_.poller().remove(fd_);
    ::close(fd_);
  }
  home_.forget_cork(*this);
  home_.remove(*this);
  queue_.release(buffer_pool::this_thread());
  if (counted_) home_.shared().open_connections.fetch_sub(1, std::memory_order_relaxed);
  if (ip_counted_) home_.shared().per_ip->release(ip_slot_);
}

void session::start() {
  const auto& cfg = home_.config();
  error_code ec;
  socket().set_option(asio::ip::tcp::no_delay(true), ec);
  if (cfg.rcvbuf > 0) socket().set_option(asio::socket_base::receive_buffer_size(cfg.rcvbuf), ec);
  if (cfg.sndbuf > 0) socket().set_option(asio::socket_base::send_buffer_size(cfg.sndbuf), ec);
  socket().non_blocking(true, ec);
  if (ec) return abort();
  if (cfg.receive_timestamps) enable_receive_timestamps(socket().native_handle());
  deadline_ms_ = home_.now_ms() + ms(cfg.handshake_timeout);
  // A socket holds a slot of --max-connections from its accept on: sockets
  // that never finish their handshake cost memory and descriptors too.
  auto& open = home_.shared().open_connections;
  if (open.fetch_add(1, std::memory_order_relaxed) >= cfg.max_connections) {
    open.fetch_sub(1, std::memory_order_relaxed);
    return refuse(503, "connection limit reached, try later");
  }
  counted_ = true;
  if (const auto& trusted = cfg.proxy_protocol_from; !trusted.empty()) {
    const auto peer = socket().remote_endpoint(ec);
    if (!ec && trusted.contains(peer.address())) return do_read_proxy_header();
  }
  admit_and_read_handshake();
}

void session::admit_and_read_handshake() {
  if (const auto& proxies = home_.config().forwarded_for_from; !proxies.empty()) {
    error_code ec;
    if (const auto hop = client_address(ec); !ec && proxies.contains(hop)) handshake_->forwarding_proxy = hop;
  }
  if (home_.shared().per_ip && !handshake_->forwarding_proxy && !admit_address()) return;
  do_read_handshake();
}

// The request of a --forwarded-for-from proxy names its client: take it,
// count what the header said, then make the per-IP checks for it.
bool session::admit_forwarded_client() {
  const auto& cfg = home_.config();
  http::forwarded_hops hops(http::syntax_of_header(cfg.forwarded_for_header));
  const auto& req = handshake_->request->parser.get();
  for (auto [line, end] = req.equal_range(cfg.forwarded_for_header); line != end; ++line)
    hops.add_line({line->value().data(), line->value().size()});
  const auto found = resolve_forwarded_client(hops, cfg.forwarded_for_from, *handshake_->forwarding_proxy);
  ++home_.counters().forwarded_for[static_cast<std::size_t>(found.what)];
  handshake_->client = found.address;
  return !home_.shared().per_ip || admit_address();
}

// A trusted balancer's connection starts with a PROXY header: read until it
// is whole (the handshake's deadline runs), drop it from the buffer and go
// on with the bytes after it, the client's request.
void session::do_read_proxy_header() {
  auto& buffer = handshake_->request->buffer;
  socket().async_read_some(buffer.prepare(http::max_proxy_header_bytes - buffer.size()),
                           [self = session_ref(this)](error_code ec, std::size_t n) { self->on_proxy_header(ec, n); });
}

void session::on_proxy_header(error_code ec, std::size_t n) {
  if (phase_ != phase::handshake || ec == asio::error::operation_aborted) return;
  if (ec) return abort();
  auto& buffer = handshake_->request->buffer;
  buffer.commit(n);
  const auto data = buffer.data();
  auto got = http::parse_proxy_header({static_cast<const std::uint8_t*>(data.data()), data.size()});
  auto& counted = home_.counters().proxy_headers;
  if (got.what == http::proxy_parse::status::need_more) {
    if (buffer.size() < http::max_proxy_header_bytes) return do_read_proxy_header();
    got.error = http::proxy_error::v2_too_long;  // cannot happen: the parser refuses first
  }
  if (got.what != http::proxy_parse::status::done) {
    ++counted[static_cast<std::size_t>(proxy_result::refused)];
    component_logger("gateway")->debug("PROXY header refused: {}", http::describe(got.error));
    return refuse(400,
                  "a PROXY protocol header was expected from this address: " + std::string(http::describe(got.error)));
  }
  buffer.consume(got.length);
  handshake_->client = to_address(got.source);
  ++counted[static_cast<std::size_t>(handshake_->client ? proxy_result::client : proxy_result::local)];
  admit_and_read_handshake();
}

asio::ip::address session::client_address(error_code& ec) const {
  if (handshake_->client) return *handshake_->client;
  return socket().remote_endpoint(ec).address();
}

bool session::admit_address() {
  error_code ec;
  const auto remote = client_address(ec);
  if (ec) return true;  // gone already: the first read fails
  const auto a = home_.shared().per_ip->admit(remote, home_.now_ms());
  if (a.what == per_ip_limits::verdict::admitted) {
    ip_slot_ = a.slot;
    ip_counted_ = true;
    return true;
  }
  // A refused socket lingers until the client reads its 429 (at most
  // --close-timeout): it must not hold a slot others could use meanwhile.
  home_.shared().open_connections.fetch_sub(1, std::memory_order_relaxed);
  counted_ = false;
  if (a.what == per_ip_limits::verdict::rate_limited) {
    ++home_.counters().handshakes_rate_limited;
    refuse(429, "too many new connections from this address, slow down", (a.retry_after_ms + 999) / 1000);
  } else {
    ++home_.counters().refused_per_ip;
    refuse(429, "too many connections from this address");
  }
  return false;
}

// ---------------------------------------------------------------- handshake

void session::do_read_handshake() {
  auto& req = *handshake_->request;
  beast::http::async_read(socket(), req.buffer, req.parser,
                          [self = session_ref(this)](error_code ec, std::size_t) { self->on_handshake(ec); });
}

void session::on_handshake(error_code ec) {
  if (phase_ != phase::handshake) return;
  const auto& cfg = home_.config();
  // With --static-dir, a request that does not ask for a WebSocket gets a
  // file. Only asked once the header is whole: no error, or a body (Beast
  // checks the body limit after the last header field).
  const auto& req = *handshake_->request;
  const auto plain = [&] {
    return !cfg.static_dir.empty() && http::static_files::is_plain_request(req.parser.get().base());
  };
  if (ec == beast::http::error::header_limit) return refuse(431, "request header block too large");
  const bool header_read = !ec || ec == beast::http::error::body_limit;
  if (header_read && handshake_->forwarding_proxy && !admit_forwarded_client()) return;
  if (ec == beast::http::error::body_limit) {
    if (plain()) return serve_static();
    return refuse(400, "a WebSocket handshake carries no body");
  }
  if (ec == asio::error::operation_aborted) return;
  if (ec == beast::http::error::end_of_stream || ec == asio::error::eof || ec == asio::error::connection_reset)
    return abort();
  if (ec) return refuse(400, "malformed HTTP request");
  if (plain()) return serve_static();

  const auto verdict = http::evaluate_handshake(req.parser.get().base(), cfg.handshake);
  if (!verdict.accepted()) return refuse(verdict.status, verdict.reason);

  request_info info = make_request_info();
  info.subprotocol = verdict.subprotocol;
  if (home_.jwt_keys() != nullptr && !authenticate(info)) return;
  std::string_view why;
  if (const unsigned status = home_.sink().admit(info, why); status != 0) return refuse(status, why);

  // Bytes the client sent after its request (frames, pipelined) are kept.
  const auto rest = req.buffer.data();
  std::span<std::uint8_t> pipelined = home_.read_buffer().first(std::min(rest.size(), home_.read_buffer().size()));
  if (!pipelined.empty()) std::memcpy(pipelined.data(), rest.data(), pipelined.size());
  if (verdict.deflate.enabled) {
    cold().deflate = verdict.deflate;
    reader_.enable_deflate(verdict.deflate);  // before the pipelined frames are read
    ++home_.counters().deflate_connections_opened;
  }
  accept(http::accept_response(verdict), std::move(info), pipelined);
}

request_info session::make_request_info() const {
  const auto& req = handshake_->request->parser.get();
  request_info info;
  const std::string_view target(req.target().data(), req.target().size());
  const auto q = target.find('?');
  info.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) info.query = std::string(target.substr(q + 1));
  error_code ec;
  const auto remote = client_address(ec);
  if (!ec) info.remote_address = remote.to_string();
  info.headers = http::forwarded_headers(req, home_.config().forward_headers);
  return info;
}

void session::refuse(unsigned status, std::string_view reason, std::uint64_t retry_after_s,
                     std::string_view extra_headers) {
  auto& c = home_.counters();
  ++c.handshakes_refused;
  ++c.refused_by_status[refusal_status::of(status)];
  respond(http::refusal_response(status, reason, retry_after_s, extra_headers));
}

bool session::authenticate(request_info& info) {
  const auto& cfg = home_.config();
  const auto authorization = handshake_->request->parser.get()[beast::http::field::authorization];
  const auto token = auth::find_token({authorization.data(), authorization.size()}, info.query);
  if (!token && cfg.allow_anonymous) return true;
  const auto now = std::chrono::system_clock::now();
  const std::int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  auth::verdict v;
  if (token)
    v = auth::verify_token(*token, *home_.jwt_keys(), cfg.jwt, now_s);
  else
    v.error = auth::auth_error::missing_token;
  if (v.error != auth::auth_error::none) {
    ++home_.counters().auth_refusals[auth::refusal_index(v.error)];
    const auto reason = auth::describe(v.error);
    refuse(401, reason, 0, http::bearer_challenge(reason, token.has_value()));
    return false;
  }
  // The credential stays here: workers get the verified user instead.
  info.query = auth::without_token_param(info.query);
  info.user = std::move(v.who.user);
  info.rooms_restricted = v.who.rooms_restricted;
  info.rooms_allowed = std::move(v.who.rooms_allowed);
  if (v.who.valid_until_s) {
    // Positive (an expired token is refused); capped so that the product cannot overflow.
    constexpr std::int64_t max_left_s = std::int64_t{100} * 365 * 86400;
    const std::int64_t left_s = std::min(*v.who.valid_until_s - now_s, max_left_s);
    cold().token_expiry_ms = home_.now_ms() + static_cast<std::uint64_t>(left_s) * 1000;
  }
  return true;
}

void session::serve_static() {
  const auto& req = handshake_->request->parser.get();
  const bool head = req.method() == beast::http::verb::head;
  http::static_files::result r;
  if (head || req.method() == beast::http::verb::get)
    r = http::static_files::resolve(home_.config().static_dir, {req.target().data(), req.target().size()});
  else
    r.status = 405;
  respond(http::static_files::response(r, head));
}

void session::respond(std::string_view response) {
  auto& out = home_.cork_for(*this);
  out.append(response.data(), response.size());
  handshake_->request.reset();
  phase_ = phase::draining;
  deadline_ms_ = home_.now_ms() + ms(home_.config().close_timeout);
  home_.uncork();
  if (phase_ == phase::closed) return;
  if (!queue_.write_armed()) shutdown_send();  // else on_writable() sends the FIN once the backlog is out
  do_wait_read();
}

void session::accept(std::string_view response, request_info&& info, std::span<const std::uint8_t> pipelined) {
  if (!adopt_socket()) return abort();
  ++home_.counters().connections_opened;
  handshake_.reset();  // nothing of Asio is left per open connection
  phase_ = phase::open;
  last_rx_ms_ = home_.now_ms();
  if (const auto& cfg = home_.config(); cfg.message_rate > 0 || cfg.byte_rate > 0)
    cold().rates = std::make_unique<cold_state::rate_buckets>(
        cold_state::rate_buckets{token_bucket(cfg.message_rate, std::max(1.0, cfg.message_rate), last_rx_ms_),
                                 token_bucket(cfg.byte_rate, std::max(1.0, cfg.byte_rate), last_rx_ms_)});
  auto& out = home_.cork_for(*this);
  out.append(response.data(), response.size());
  home_.sink().on_open(*this, std::move(info));
  if (!pipelined.empty()) {
    // The pipelined copy sits at the start of the read buffer; parse it in place.
    consume(home_.read_buffer().first(pipelined.size()));
  }
  home_.uncork();
  continue_reading();
}

bool session::adopt_socket() {
  error_code ec;
  const int fd = socket().release(ec);
  if (ec) return false;
  if (!home_.poller().add(fd, *this)) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  polled_self_ = session_ref(this);
  return true;
}

void session::on_poll(std::uint32_t events) {
  if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP) && std::exchange(write_waiting_, false)) on_writable({});
  if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) || !adopted()) return;
  if (events & (EPOLLRDHUP | EPOLLERR | EPOLLHUP)) peer_gone_ = true;
  if (reading_)
    on_readable({});
  else
    maybe_readable_ = true;  // paused: read once resumed
}

// ---------------------------------------------------------------- reading

void session::continue_reading() {
  // A held session keeps a read armed (its bytes are discarded): the
  // pending wait keeps it alive and notices the peer vanishing.
  if (phase_ == phase::closed) return;
  if (phase_ == phase::open && !home_.sink().can_read(*this)) {
    paused_ = true;  // the sink calls resume_reading() when its downstream has room; polled_self_ keeps us
    return;
  }
  do_wait_read();
}

void session::resume_reading() {
  if (!paused_) return;
  paused_ = false;
  if (phase_ != phase::closed) do_wait_read();
}

void session::do_wait_read() {
  if (reading_) return;
  reading_ = true;
  if (!adopted()) {
    socket().async_wait(tcp_socket::wait_read, [self = session_ref(this)](error_code ec) { self->on_readable(ec); });
    return;
  }
  // The poller reports the next edge; bytes already waiting raise none, so
  // read them on the next turn, after the thread's other sockets.
  if (std::exchange(maybe_readable_, false)) home_.poller().redeliver(fd_, EPOLLIN);
}

void session::on_readable(error_code ec) {
  reading_ = false;
  if (ec || phase_ == phase::closed) {
    if (ec != asio::error::operation_aborted) abort();
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  auto buffer = home_.read_buffer();
  const timestamped_read r = read_timestamped(adopted() ? fd_ : socket().native_handle(), buffer, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return do_wait_read();
  if (ec) return abort();  // EOF or reset: a clean close has already finished us, anything else is 1006

  last_rx_ms_ = home_.now_ms();
  ping_outstanding_ = false;  // any traffic proves the peer is alive
  auto& c = home_.counters();
  // A clock stepped back (NTP) can put the stamp after the read: not counted.
  if (const std::int64_t waited = realtime_ns() - r.received_ns; r.received_ns != 0 && waited >= 0)
    c.receive_wait_ns.observe(static_cast<std::uint64_t>(waited));
  c.socket_read_bytes += r.bytes;
  // The rest raises no new edge; nor does the end of stream after a peer's
  // last bytes, when both came in one edge: read on to see it.
  if (r.bytes == buffer.size() || peer_gone_) maybe_readable_ = true;
  const std::uint32_t frames_before = reader_.frames_seen();
  consume(buffer.first(r.bytes));
  c.frames_per_read.observe(static_cast<std::uint32_t>(reader_.frames_seen() - frames_before));  // modulo 2^32
  home_.after_read();
  c.client_turn_ns.observe(metrics::ns_since(started));
  continue_reading();
}

void session::consume(std::span<std::uint8_t> bytes) {
  if (phase_ != phase::open && phase_ != phase::closing) return;  // draining: discard until EOF
  const ws::error e = reader_.feed(bytes, home_.config().reader, thread_pools(), *this);
  if (e != ws::error::none && (phase_ == phase::open || phase_ == phase::closing)) fail(e);
}

void session::on_message(ws::opcode op, std::span<std::uint8_t> payload) {
  if (phase_ != phase::open) return;  // data after our close frame is discarded (RFC 6455 §5.5.1)
  auto& c = home_.counters();
  ++c.messages_in;
  ++c.messages_received[data_index(op)];
  c.payload_received[data_index(op)] += payload.size();
  c.message_size.observe(payload.size());
  if (reader_.compressed()) {
    ++c.deflate_messages_in;
    c.deflate_bytes_in_compressed += reader_.wire_size();
    c.deflate_bytes_in_uncompressed += payload.size();
  }
  if (cold_ && cold_->rates && !within_rate(payload.size())) return;
  home_.sink().on_message(*this, op, payload);
}

bool session::within_rate(std::size_t payload_size) {
  const auto& cfg = home_.config();
  const std::uint64_t now = home_.now_ms();
  std::size_t what = 0;  // index of rate_limit_what
  auto& rates = *cold_->rates;
  if (cfg.message_rate > 0 && !rates.messages.try_take(1, now))
    what = 0;
  else if (cfg.byte_rate > 0 && !rates.bytes.try_take(static_cast<double>(payload_size), now))
    what = 1;
  else
    return true;
  const bool drop = cfg.rate_limit_policy == overflow_policy::drop;
  ++home_.counters().rate_limited[what * 2 + (drop ? 1 : 0)];
  if (!drop) close(ws::close_code::policy_violation, what == 0 ? "message rate exceeded" : "byte rate exceeded");
  return false;
}

void session::on_ping(std::span<std::uint8_t> payload) {
  if (phase_ != phase::open) return;
  // A pong counts toward --max-send-queue like a message: a client that
  // pings and never reads would otherwise grow its backlog without bound.
  if (!make_room(ws::frame_header_size(payload.size()) + payload.size(), frame_kind::pong)) return;
  send_frame(ws::opcode::pong, payload, true);
}

void session::on_pong(std::span<std::uint8_t>) { ping_outstanding_ = false; }

void session::on_close(std::uint16_t code, std::string_view) {
  if (phase_ == phase::open) {
    if (hold({code, true, ws::error::none})) return;
    echo_close(code);
  }
  finish();
}

void session::echo_close(std::uint16_t code) {
  // Echo the peer's code (RFC 6455 §5.5.1), then close TCP first (§7.1.1).
  if (code == ws::close_code::no_status)
    send_frame(ws::opcode::close, {}, true);
  else
    send_close_frame(code, {});
  leave_open(code, close_origin::client);
}

bool session::hold(held_close what) {
  if (!home_.sink().hold_close(*this)) return false;
  phase_ = phase::held;
  cold().held = what;
  ++home_.counters().held_closes[held_reason(what.by_client)];
  deadline_ms_ = home_.now_ms() + ms(home_.config().close_timeout);
  return true;
}

// ---------------------------------------------------------------- writing

void session::send(ws::opcode op, std::span<const std::uint8_t> payload) {
  if (phase_ != phase::open && phase_ != phase::held) return;
  count_sent(op, payload.size());
  if (!cold_ || !cold_->deflate.enabled) return send_frame(op, payload, false);
  // Room is judged on the uncompressed size, before compressing: with
  // context takeover a message once compressed must also be sent.
  if (!make_room(ws::frame_header_size(payload.size()) + payload.size())) return;
  if (const auto packed = home_.compressor().compress(payload, cold_->deflate, cold_->deflater))
    return send_frame(op, *packed, true, true);
  send_frame(op, payload, true);
}

void session::send_framed(std::span<const std::uint8_t> frame, ws::opcode op, std::size_t payload_size) {
  if ((phase_ != phase::open && phase_ != phase::held) || !make_room(frame.size())) return;
  count_sent(op, payload_size);
  home_.cork_for(*this).append(frame);
}

void session::send_shared(broadcast_frames& frames) {
  if (phase_ != phase::open && phase_ != phase::held) return;
  const ws::deflate_params& deflate = cold_ ? cold_->deflate : no_deflate;
  if (deflate.server_takeover) return send(frames.op(), frames.payload());
  send_framed(frames.frame_for(deflate), frames.op(), frames.payload().size());
}

void session::count_sent(ws::opcode op, std::size_t payload_size) {
  auto& c = home_.counters();
  ++c.messages_out;
  ++c.messages_sent[data_index(op)];
  c.payload_sent[data_index(op)] += payload_size;
}

bool session::make_room(std::size_t frame_size, frame_kind kind) {
  const auto& cfg = home_.config();
  if (queue_.has_room(frame_size, home_.corked_bytes(*this), cfg.max_send_queue)) return true;
  if (cfg.send_queue_policy == overflow_policy::drop) {
    ++(kind == frame_kind::pong ? home_.counters().dropped_pongs : home_.counters().dropped_messages);
    return false;
  }
  ++home_.counters().overflow_closes;
  close(ws::close_code::policy_violation, "send queue full");
  return false;
}

void session::send_frame(ws::opcode op, std::span<const std::uint8_t> payload, bool exempt_from_limit,
                         bool compressed) {
  if (phase_ == phase::draining || phase_ == phase::closed) return;
  const std::size_t frame_size = ws::frame_header_size(payload.size()) + payload.size();
  if (!exempt_from_limit && !make_room(frame_size)) return;
  auto& out = home_.cork_for(*this);
  std::uint8_t* p = out.prepare(frame_size);
  const std::size_t h = ws::write_frame_header(p, op, payload.size(), true, compressed);
  if (!payload.empty()) std::memcpy(p + h, payload.data(), payload.size());
  out.commit(frame_size);
}

void session::send_close_frame(std::uint16_t code, std::string_view reason) {
  std::uint8_t payload[125];
  payload[0] = static_cast<std::uint8_t>(code >> 8);
  payload[1] = static_cast<std::uint8_t>(code);
  const std::size_t n = std::min<std::size_t>(reason.size(), sizeof payload - 2);
  if (n != 0) std::memcpy(payload + 2, reason.data(), n);  // an empty reason may have no data()
  send_frame(ws::opcode::close, std::span<const std::uint8_t>(payload, n + 2), true);
}

void session::defer(byte_buffer& corked) {
  if (corked.empty() || phase_ == phase::closed) return;
  if (queue_.defer(corked, buffer_pool::this_thread())) home_.flush_at_end_of_turn(session_ref(this));
}

void session::flush_deferred() {
  if (phase_ == phase::closed) return;
  after_write(queue_.flush_deferred(buffer_pool::this_thread(), writer()));
}

std::span<const std::uint8_t> session::deferred_write() const noexcept {
  if (phase_ == phase::closed || !adopted()) return {};
  return queue_.deferred_write();
}

void session::flush_deferred(write_result sent) {
  if (phase_ == phase::closed) return;
  // The batch wrote what deferred_write() named, the backlog from its
  // head; nothing wrote this session since, so the queue's one write is
  // of those bytes and takes the batch's answer.
  bool answered = false;
  after_write(queue_.flush_deferred(buffer_pool::this_thread(), [&](std::span<const std::uint8_t> bytes) {
    if (std::exchange(answered, true)) return write_to_socket(bytes);
    return count_written(sent);
  }));
}

void session::flush(byte_buffer& corked) {
  if (corked.empty() || phase_ == phase::closed) return;
  after_write(queue_.flush(corked.span(), buffer_pool::this_thread(), writer()));
}

write_result session::write_to_socket(std::span<const std::uint8_t> bytes) {
  ++home_.counters().socket_write_calls;
  if (adopted()) return count_written(send_now(fd_, bytes));
  error_code ec;
  const std::size_t n = socket().write_some(asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return {write_result::status::would_block, 0};
  if (ec) return {write_result::status::failed, 0};
  return count_written({write_result::status::written, n});
}

write_result session::count_written(write_result r) {
  if (r.what == write_result::status::written) {
    thread_counters& c = home_.counters();
    c.socket_written_bytes += r.bytes;
    ++c.socket_writes;
  }
  return r;
}

void session::after_write(send_queue::next step) {
  switch (step) {
    case send_queue::next::nothing: return;
    case send_queue::next::wait_writable: return do_wait_write();
    case send_queue::next::drained:
      if (phase_ == phase::draining) shutdown_send();
      return;
    case send_queue::next::failed: return abort();
  }
}

void session::do_wait_write() {
  if (adopted()) {
    write_waiting_ = true;  // the poller's next EPOLLOUT edge calls on_writable()
    return;
  }
  socket().async_wait(tcp_socket::wait_write, [self = session_ref(this)](error_code ec) { self->on_writable(ec); });
}

void session::on_writable(error_code ec) {
  if (ec || phase_ == phase::closed) {
    if (ec != asio::error::operation_aborted) abort();
    return;
  }
  after_write(queue_.on_writable(buffer_pool::this_thread(), writer()));
}

// ---------------------------------------------------------------- closing

void session::close(std::uint16_t code, std::string_view reason) {
  if (phase_ != phase::open) return;
  send_close_frame(code, reason);
  leave_open(code, close_origin::server);
  phase_ = phase::closing;
  deadline_ms_ = home_.now_ms() + ms(home_.config().close_timeout);
}

void session::fail(ws::error e) {
  static const auto log = component_logger("gateway");
  log->debug("conn={} protocol error {} (close {})", id_, ws::to_string(e), ws::close_code_for(e));
  ++home_.counters().protocol_errors;
  ++home_.counters().errors_by_kind[static_cast<std::size_t>(e)];
  const std::uint16_t code = ws::close_code_for(e);
  if (phase_ == phase::open && hold({code, false, e})) return;
  if (phase_ == phase::open) {
    send_close_frame(code, ws::to_string(e));
    leave_open(code, close_origin::server);
  }
  // Failing the connection (RFC 6455 §7.1.7): no need to wait for the peer.
  finish();
}

void session::release_close() {
  if (phase_ != phase::held) return;
  const held_close& held = cold_->held;  // hold() allocated it
  if (held.by_client) {
    echo_close(held.code);
  } else {
    send_close_frame(held.code, ws::to_string(held.error));
    leave_open(held.code, close_origin::server);
  }
  finish();
  home_.uncork();
}

void session::leave_open(std::uint16_t code, close_origin origin) {
  phase_ = phase::closing;
  ++home_.counters().closed_by_code[close_code_group::of(code)];
  if (cold_) {
    if (cold_->deflate.enabled) ++home_.counters().deflate_connections_closed;
    cold_->deflater.reset();  // nothing is compressed once closing
  }
  home_.sink().on_close(*this, code, origin);
  resume_reading();  // a close handshake needs the peer's close frame
}

void session::go_away() {
  if (phase_ == phase::handshake) return abort();
  if (phase_ == phase::held) return release_close();
  close(ws::close_code::going_away, "server shutting down");
}

void session::finish() {
  if (phase_ == phase::draining || phase_ == phase::closed) return;
  phase_ = phase::draining;
  reader_.release_buffers(thread_pools());
  deadline_ms_ = home_.now_ms() + ms(home_.config().close_timeout);
  // The FIN goes out once the backlog (and the cork) are written; see flush().
  if (!queue_.write_pending() && home_.corked_bytes(*this) == 0) shutdown_send();
}

void session::shutdown_send() {
  if (write_shut_) return;
  write_shut_ = true;
  if (adopted()) {
    ::shutdown(fd_, SHUT_WR);
    return;
  }
  error_code ec;
  socket().shutdown(tcp_socket::shutdown_send, ec);
}

void session::abort() {
  if (phase_ == phase::closed) return;
  if (phase_ == phase::open || phase_ == phase::held) leave_open(ws::close_code::abnormal, close_origin::network);
  phase_ = phase::closed;
  // handshake_ stays: a pending HTTP read still writes into its buffer when it
  // completes with operation_aborted; the session's destructor frees it.
  reader_.release_buffers(thread_pools());
  home_.forget_cork(*this);
  if (adopted()) {
    home_.poller().remove(fd_);
    ::close(fd_);
    fd_ = -1;
    // Released on a later turn, as Asio's aborted waits would: callers up
    // the stack (a broadcast, the sink) may still be using this session.
    asio::post(home_.context(), [keep = std::move(polled_self_)] {});
    return;
  }
  error_code ec;
  socket().close(ec);  // pending waits complete with operation_aborted and release the session
}

void session::on_tick(std::uint64_t now) {
  const auto& cfg = home_.config();
  switch (phase_) {
    case phase::handshake:
      if (!due(now, deadline_ms_)) return;
      if (handshake_->request->buffer.size() > 0) {
        const std::string response = http::refusal_response(408, "handshake not completed in time");
        error_code ec;
        socket().write_some(asio::buffer(response), ec);
      }
      return abort();
    case phase::open:
      if (cold_ && cold_->token_expiry_ms != 0 && due(now, cold_->token_expiry_ms)) {
        ++home_.counters().auth_expired_closes;
        return close(ws::close_code::token_expired, "token expired");
      }
      if (paused_) return;  // not reading: silence is ours, not the client's
      if (ping_outstanding_) {
        if (due(now, deadline_ms_)) {
          ++home_.counters().pong_timeouts;
          send_close_frame(ws::close_code::internal_error, "pong timeout");
          leave_open(ws::close_code::internal_error, close_origin::server);
          finish();
        }
      } else if (due(now, last_rx_ms_ + ms(cfg.idle_ping))) {
        ping_outstanding_ = true;
        deadline_ms_ = now + ms(cfg.pong_timeout);
        ++home_.counters().pings_sent;
        send_frame(ws::opcode::ping, {}, true);
      }
      return;
    case phase::held:
      if (!due(now, deadline_ms_)) return;
      // The replies did not come in time (a stuck or slow worker): close anyway.
      ++home_.counters().held_close_timeouts[held_reason(cold_->held.by_client)];
      return release_close();
    case phase::closing:
    case phase::draining:
      if (due(now, deadline_ms_)) abort();
      return;
    case phase::closed: return;
  }
}

}  // namespace fg::gateway
