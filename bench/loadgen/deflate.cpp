#include "deflate.hpp"

#include <algorithm>
#include <new>

namespace loadgen {

namespace {

constexpr std::uint8_t tail[4] = {0x00, 0x00, 0xff, 0xff};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int bits_value(std::string_view v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  if (v.size() == 1 && (v[0] == '8' || v[0] == '9')) return v[0] - '0';
  if (v.size() == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5') return 10 + (v[1] - '0');
  return 0;
}

}  // namespace

bool parse_deflate_answer(std::string_view value, deflate_agreement& out, std::string& why) {
  out = {};
  value = trim(value);
  if (value.empty()) return true;
  if (value.find(',') != std::string_view::npos) {
    why = "more than one extension accepted: " + std::string(value);
    return false;
  }
  bool first = true;
  while (!value.empty()) {
    const auto semi = value.find(';');
    const std::string_view part = trim(value.substr(0, semi));
    value = semi == std::string_view::npos ? std::string_view{} : value.substr(semi + 1);
    const auto eq = part.find('=');
    const std::string_view name = trim(part.substr(0, eq));
    const std::string_view arg = eq == std::string_view::npos ? std::string_view{} : trim(part.substr(eq + 1));
    if (first) {
      if (part != "permessage-deflate") {
        why = "unexpected extension " + std::string(part);
        return false;
      }
      first = false;
      continue;
    }
    if (name == "server_no_context_takeover" && eq == std::string_view::npos) {
      out.server_takeover = false;
    } else if (name == "client_no_context_takeover" && eq == std::string_view::npos) {
      // We never keep a context anyway.
    } else if (name == "server_max_window_bits" && bits_value(arg) != 0) {
      out.server_bits = bits_value(arg);
    } else if (name == "client_max_window_bits" && bits_value(arg) != 0) {
      out.client_bits = bits_value(arg);  // RFC 7692 §7.1.2.2: we offered it, so it may come back
    } else {
      why = "bad permessage-deflate parameter " + std::string(part);
      return false;
    }
  }
  out.enabled = true;
  return true;
}

inflate_stream::inflate_stream(int window_bits) {
  // A window of 9 also reads a server that negotiated 8 but uses zlib's 9.
  if (inflateInit2(&z_, -std::max(window_bits, 9)) != Z_OK) throw std::bad_alloc();
}

inflate_stream::~inflate_stream() { inflateEnd(&z_); }

bool inflate_stream::inflate_message(const std::uint8_t* p, std::size_t n, std::vector<std::uint8_t>& out,
                                     std::size_t& produced, std::size_t max, bool keep_context) {
  if (!keep_context) inflateReset(&z_);
  produced = 0;
  for (int part = 0; part < 2; ++part) {
    z_.next_in = const_cast<Bytef*>(part == 0 ? p : tail);  // zlib reads, never writes, its input
    z_.avail_in = static_cast<uInt>(part == 0 ? n : sizeof tail);
    do {
      // `out` only grows (and is zero-filled only then): it is reused for every message.
      if (out.size() - produced < 4096) out.resize(std::max<std::size_t>(out.size() * 2, produced + 64 * 1024));
      z_.next_out = out.data() + produced;
      z_.avail_out = static_cast<uInt>(out.size() - produced);
      const int rc = ::inflate(&z_, Z_SYNC_FLUSH);
      produced = out.size() - z_.avail_out;
      if (produced > max) return false;
      if (rc == Z_STREAM_END) {
        inflateReset(&z_);  // a final block: the next message starts a new stream
        return true;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) return false;
    } while (z_.avail_out == 0);  // the output was full: more may be pending
  }
  return true;
}

send_compressor::~send_compressor() {
  for (auto& z : by_bits_)
    if (z) deflateEnd(z.get());
}

void send_compressor::append_frame(byte_buffer& out, opcode op, const std::uint8_t* payload, std::size_t len,
                                   int window_bits, std::uint32_t mask_key) {
  const int bits = std::clamp(window_bits, 9, 15);  // zlib compresses a window of 8 with 9
  auto& z = by_bits_[static_cast<std::size_t>(bits - 8)];
  if (!z) {
    z = std::make_unique<z_stream>();
    if (deflateInit2(z.get(), Z_DEFAULT_COMPRESSION, Z_DEFLATED, -bits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      throw std::bad_alloc();
  }
  const std::size_t need = deflateBound(z.get(), len) + 16;
  if (scratch_.size() < need) scratch_.resize(need);  // grows only: zero-filled once
  z->next_in = const_cast<Bytef*>(payload);
  z->avail_in = static_cast<uInt>(len);
  z->next_out = scratch_.data();
  z->avail_out = static_cast<uInt>(need);
  ::deflate(z.get(), Z_SYNC_FLUSH);
  std::size_t n = need - z->avail_out;
  n = n >= 4 ? n - 4 : n;                   // without the sync flush's 0x00 0x00 0xff 0xff (§7.2.1)
  if (len == 0) n = 1, scratch_[0] = 0x00;  // §7.2.3.6
  deflateReset(z.get());
  const std::size_t start = out.size();
  append_client_frame(out, op, scratch_.data(), n, mask_key);
  out.data()[start] |= 0x40;  // RSV1: a compressed message
}

bool open_message(deflate_state& d, bool compressed, const std::uint8_t*& p, std::size_t& n,
                  std::vector<std::uint8_t>& scratch, std::size_t max) {
  if (!compressed) return true;
  if (!d.inflater) d.inflater = std::make_unique<inflate_stream>(d.agreed.server_bits);
  std::size_t produced = 0;
  if (!d.inflater->inflate_message(p, n, scratch, produced, max, d.agreed.server_takeover)) return false;
  p = scratch.data();
  n = produced;
  return true;
}

}  // namespace loadgen
