// The texts of the rooms protocol that both processes produce: a member's
// delivery `{"room":R,"data":V}` (V forwarded as the exact bytes received,
// whether a client published it over /rooms or a backend over the gateway's
// publish API) and `{"error":"..."}` answers.
#pragma once

#include <string>
#include <string_view>

namespace fg::json {

// A JSON string of arbitrary bytes; invalid UTF-8 (possible only when the
// gateway skips validation) becomes U+FFFD instead of an exception.
std::string quote(std::string_view text);

// `{"room":<R quoted>,"data":<raw_data as is>}`
std::string room_delivery(std::string_view room, std::string_view raw_data);

// `{"error":<message quoted>}`
std::string error_object(std::string_view message);

// "invalid JSON: <nlohmann's reason>" for a text that does not parse.
std::string syntax_error(std::string_view text);

}  // namespace fg::json
