// Fuzzes the /rooms protocol parser with what any client may send: it must
// never crash or read outside the text, a request it accepts must be
// consistent (a room of 1..256 bytes of UTF-8; publish data a valid JSON
// value lying inside the message), and the delivery built from it must be
// a JSON object giving the same room and data back (also with an offset).
// A join's position ("since") has a bounded epoch, and the answer built
// for it is JSON naming the room.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/utf8.hpp"
#include "tests/fuzz/check.hpp"
#include "worker/apps/rooms_protocol.hpp"

using fg::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto result = fg::worker::parse_rooms_request(text);
  check(result.request.has_value() != !result.error.empty());
  if (!result.request) {
    check(nlohmann::json::accept(fg::worker::rooms_error(result.error)));
    return 0;
  }
  const auto& r = *result.request;
  check(!r.room.empty() && r.room.size() <= fg::worker::max_room_name_bytes);
  check(fg::is_valid_utf8({reinterpret_cast<const std::uint8_t*>(r.room.data()), r.room.size()}));
  if (r.since) {
    check(r.op == fg::worker::rooms_op::join);
    check(!r.since->epoch.empty() && r.since->epoch.size() <= 64);
    fg::worker::room_history h;
    h.result = fg::worker::room_history::outcome::epoch_changed;
    h.epoch = r.since->epoch;
    h.top = r.since->offset;
    const auto answer = nlohmann::json::parse(fg::worker::rooms_joined(r.room, h, true));
    check(answer["joined"] == nlohmann::json::parse(fg::worker::rooms_delivery(r.room, "0"))["room"]);
  }
  if (r.op != fg::worker::rooms_op::publish) return 0;
  check(r.data.data() >= text.data() && r.data.data() + r.data.size() <= text.data() + text.size());
  check(nlohmann::json::accept(r.data));
  const auto delivery = nlohmann::json::parse(fg::worker::rooms_delivery(r.room, r.data));
  check(delivery.size() == 2 && delivery["room"] == r.room && delivery["data"] == nlohmann::json::parse(r.data));
  const auto numbered =
      nlohmann::json::parse(fg::worker::rooms_delivery_at(fg::worker::rooms_delivery(r.room, r.data), 7));
  check(numbered.size() == 3 && numbered["offset"] == 7 && numbered["data"] == delivery["data"]);
  return 0;
}
