#include "gateway/ws/inflater.hpp"

#include <algorithm>
#include <new>

namespace fg::ws {

namespace {

// RFC 7692 §7.2.2: the sender removes this tail; the receiver puts it back.
constexpr std::uint8_t empty_block_tail[4] = {0x00, 0x00, 0xff, 0xff};

// zlib cannot compress with a 256-byte window (windowBits 8) and uses 512
// (9) instead, so a peer that negotiated 8 may send 9-bit distances: read
// with at least 9. (A 9-bit zlib deflater never reaches back more than
// 250 bytes, so it also honours a negotiated 8.)
constexpr int inflate_bits(int negotiated) { return std::clamp(negotiated, 9, 15); }

}  // namespace

inflater::inflater(int window_bits) {
  if (inflateInit2(&z_, -inflate_bits(window_bits)) != Z_OK) throw std::bad_alloc();
}

inflater::~inflater() { inflateEnd(&z_); }

error inflater::inflate(std::span<const std::uint8_t> in, byte_buffer& out, std::uint64_t limit) {
  while (!ended_) {
    // At most one byte beyond the limit is ever written: that byte proves
    // the message too big, and nothing more is spent on it.
    const std::uint64_t room = limit - std::min<std::uint64_t>(limit, out.size()) + 1;
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>(room, std::max<std::size_t>(out.capacity() - out.size(), 4096)));
    const std::size_t give = std::min<std::size_t>(in.size(), std::size_t{1} << 30);  // avail_in is 32 bits
    // zlib's input pointer is not const-qualified, but inflate only reads it.
    z_.next_in = const_cast<Bytef*>(in.data());
    z_.avail_in = static_cast<uInt>(give);
    z_.next_out = out.prepare(want);
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(want, std::size_t{1} << 30));
    const uInt offered_out = z_.avail_out;
    const int rc = ::inflate(&z_, Z_SYNC_FLUSH);
    out.commit(offered_out - z_.avail_out);
    in = in.subspan(give - z_.avail_in);
    if (out.size() > limit) return error::message_too_big;
    switch (rc) {
      case Z_OK: break;
      case Z_STREAM_END: ended_ = true; return error::none;
      case Z_BUF_ERROR: return error::none;  // no progress possible: every input byte is consumed and flushed
      case Z_MEM_ERROR: throw std::bad_alloc();
      default: return error::invalid_deflate_data;  // Z_DATA_ERROR (corrupt), Z_NEED_DICT (not raw deflate)
    }
    if (in.empty() && z_.avail_out != 0) return error::none;
  }
  return error::none;
}

error inflater::finish_message(byte_buffer& out, std::uint64_t limit) {
  const error e = inflate(empty_block_tail, out, limit);
  if (ended_ && e == error::none) {
    // A final block ended the stream, but with context takeover the next
    // message may still refer to this one's data: restart the stream with
    // the window as its dictionary.
    byte_buffer window(std::size_t{1} << 15);
    uInt size = 0;
    inflateGetDictionary(&z_, window.data(), &size);
    inflateReset(&z_);
    inflateSetDictionary(&z_, window.data(), size);
    ended_ = false;
  }
  return e;
}

void inflater::reset() noexcept {
  inflateReset(&z_);
  ended_ = false;
}

std::size_t inflater::memory_bound(int window_bits) noexcept {
  constexpr std::size_t fixed_state = 7 * 1024;  // sizeof(inflate_state) in zlib 1.2.13 on 64-bit: 7.0 KiB
  return (std::size_t{1} << inflate_bits(window_bits)) + fixed_state;
}

std::unique_ptr<inflater> inflater_pool::acquire() {
  if (free_.empty()) return std::make_unique<inflater>(15);
  return free_.take();
}

void inflater_pool::release(std::unique_ptr<inflater> i) {
  if (!i) return;
  i->reset();
  if (free_.size() < max_pooled) free_.give(std::move(i));
}

inflater_pool& inflater_pool::this_thread() {
  thread_local inflater_pool pool;
  return pool;
}

}  // namespace fg::ws
