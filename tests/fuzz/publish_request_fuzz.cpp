// Fuzzes the body parser of POST /api/publish (a backend's bytes, behind a
// token, but still bytes from the network): it must never crash, must
// answer either messages or one error, and every message's data must be a
// JSON value on its own (the /rooms app splices it into its delivery).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gateway/admin/publish_request.hpp"
#include "tests/fuzz/check.hpp"

using fg::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto result = fg::gateway::admin::parse_publish_request(body);
  if (!result.error.empty()) {
    check(result.messages.empty());
    check(nlohmann::json::accept(fg::gateway::admin::error_body(result.error)));
    return 0;
  }
  check(nlohmann::json::accept(body));
  for (const auto& m : result.messages) {
    check(!m.room.empty() && m.room.size() <= fg::gateway::admin::max_room_name_bytes);
    check(nlohmann::json::accept(m.data));
  }
  return 0;
}
