// Fuzzes the gateway<->worker link decoder: fed whole and in pieces (split
// by the first byte) it must decode the same envelopes and stop with the
// same error; it must never crash, whatever a broken worker sends. Each
// decoded envelope is re-encoded and decoded again to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/link/codec.hpp"
#include "tests/fuzz/check.hpp"
#include "tests/fuzz/split_input.hpp"

namespace {
using fg::fuzz::check;

// Map fields (ConnectionOpened.headers) serialize in an unspecified order,
// which may differ between two parses of the same bytes: compare the
// deterministic form (keys sorted).
std::string canonical(const framegate::link::Envelope& e) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  e.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

struct outcome {
  std::vector<std::string> envelopes;
  fg::link::decode_error error = fg::link::decode_error::none;
};

template <class Pieces>
outcome decode(const Pieces& pieces) {
  outcome out;
  fg::link::decoder d(64 * 1024);
  for (const auto& piece : pieces) {
    out.error = d.feed(piece, [&](const framegate::link::Envelope& e) {
      out.envelopes.push_back(canonical(e));
      fg::byte_buffer again;
      fg::link::encode(e, again);
      fg::link::decoder d2;
      int count = 0;
      check(d2.feed(again.span(), [&](const framegate::link::Envelope&) { ++count; }) == fg::link::decode_error::none);
      check(count == 1);
    });
    if (out.error != fg::link::decode_error::none) break;
  }
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t seed = data[0];
  ++data;
  --size;
  const std::vector<std::span<const std::uint8_t>> whole{{data, size}};
  const outcome a = decode(whole);
  const outcome b = decode(fg::fuzz::split_input(seed, data, size));
  check(a.error == b.error);
  check(a.envelopes == b.envelopes);
  return 0;
}
