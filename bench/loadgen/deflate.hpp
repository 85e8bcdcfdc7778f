#pragma once
// Client side of permessage-deflate (RFC 7692) for --deflate: the offer a
// browser sends, the check of the server's answer, compression of what is
// sent and inflation of what arrives. Self-contained like the rest of the
// load generator (zlib only), so it shares no code with the server.
//
// Sends are compressed without context takeover, which a client may always
// do (one stream per thread and window size, reset per message); what the
// server sends is inflated with a per-connection stream when the server
// keeps its context (Node ws does by default), allocated on the first
// compressed message, so an idle connection holds none.
#include <zlib.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "byte_buffer.hpp"
#include "ws_codec.hpp"

namespace loadgen {

inline constexpr std::string_view deflate_offer = "permessage-deflate; client_max_window_bits";

struct deflate_agreement {
  bool enabled = false;
  bool server_takeover = true;  // no server_no_context_takeover in the answer
  int server_bits = 15;
  int client_bits = 15;
};

// The server's Sec-WebSocket-Extensions value (empty: declined, which is
// fine). False when the answer is not one our offer allows.
bool parse_deflate_answer(std::string_view value, deflate_agreement& out, std::string& why);

class inflate_stream {
 public:
  explicit inflate_stream(int window_bits);
  ~inflate_stream();
  inflate_stream(const inflate_stream&) = delete;
  inflate_stream& operator=(const inflate_stream&) = delete;
  // One whole message: payload plus the 0x00 0x00 0xff 0xff tail (§7.2.2)
  // into out[0, produced). False if corrupt or larger than max.
  bool inflate_message(const std::uint8_t* p, std::size_t n, std::vector<std::uint8_t>& out, std::size_t& produced,
                       std::size_t max, bool keep_context);

 private:
  z_stream z_{};
};

// What one connection agreed to, and its inflater.
struct deflate_state {
  deflate_agreement agreed;
  std::unique_ptr<inflate_stream> inflater;
  bool message_compressed = false;  // the message being reassembled has RSV1
};

// One thread's compressor for sends.
class send_compressor {
 public:
  send_compressor() = default;
  ~send_compressor();
  send_compressor(const send_compressor&) = delete;
  send_compressor& operator=(const send_compressor&) = delete;
  // Appends one final masked frame with RSV1 set and `payload` compressed
  // with a window of at most `window_bits`.
  void append_frame(byte_buffer& out, opcode op, const std::uint8_t* payload, std::size_t len, int window_bits,
                    std::uint32_t mask_key);

 private:
  std::array<std::unique_ptr<z_stream>, 8> by_bits_{};  // 8..15
  std::vector<std::uint8_t> scratch_;
};

// The payload a complete message carries for the application: inflated
// into `scratch` when it came compressed (p and n then point there).
// False when it does not inflate (counted as a protocol error).
bool open_message(deflate_state& d, bool compressed, const std::uint8_t*& p, std::size_t& n,
                  std::vector<std::uint8_t>& scratch, std::size_t max);

}  // namespace loadgen
