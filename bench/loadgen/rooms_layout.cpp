#include "rooms_layout.hpp"

#include <algorithm>

#include "payload.hpp"

namespace loadgen {

layout make_layout(const options& opts) {
  layout lay;
  lay.rooms = opts.rooms;
  lay.members = opts.members;
  lay.publishers = opts.publishers;
  lay.publishers_join = opts.publishers_join;
  lay.connections = lay.members + (lay.publishers_join ? 0 : lay.publishers);
  lay.room_size.assign(lay.rooms, 0);
  for (std::uint32_t i = 0; i < lay.members; ++i) ++lay.room_size[i % lay.rooms];
  for (std::uint32_t r = 0; r < lay.rooms; ++r) {
    std::string name = "r";  // appended, not "r" + ...: GCC 12 warns falsely (-Wrestrict) on that here
    name += std::to_string(r);
    lay.delivery_prefix.push_back("{\"room\":\"" + name + "\",\"data\":{\"t\":");
    lay.publish_prefix.push_back("{\"op\":\"publish\",\"room\":\"" + name + "\",\"data\":{\"t\":");
    lay.join_text.push_back("{\"op\":\"join\",\"room\":\"" + name + "\"}");
  }
  // --publish-size: a JSON array of records after the sequence number.
  if (opts.publish_size == 0) lay.data_tails.assign(1, "}}");
  for (std::size_t v = 0; opts.publish_size > 0 && v < payload_variants(opts.publish_size); ++v) {
    std::string tail = ",\"x\":[";
    tail.append(
        json_records(opts.publish_size - std::min<std::size_t>(opts.publish_size, 64), static_cast<std::uint32_t>(v)));
    lay.data_tails.push_back(tail.append("]}}"));
  }
  return lay;
}

}  // namespace loadgen
