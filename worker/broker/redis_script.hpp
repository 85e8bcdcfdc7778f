// A Lua script the broker runs with EVALSHA (loaded with SCRIPT LOAD on
// every new publish connection: a restarted Redis has forgotten them).
#pragma once

#include <string>
#include <string_view>

namespace fg::worker {

struct redis_script {
  std::string_view body;
  std::string sha1;  // lower-case hex, for EVALSHA
};

// `body` must outlive the script (the scripts are string literals).
redis_script make_redis_script(std::string_view body);

// A key of the room whose channel is `channel`, in the channel's hash slot
// (Redis Cluster): "<channel><suffix>" when the channel has a hash tag
// (hash_tag.hpp), "{<channel>}<suffix>" otherwise.
std::string room_key(std::string_view channel, std::string_view suffix);

}  // namespace fg::worker
