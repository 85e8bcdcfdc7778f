// Small JSON texts both processes answer with: quoted strings, error
// objects `{"error":"..."}` (the /rooms app's and the admin API's) and the
// one-line reason a text is not JSON.
#pragma once

#include <string>
#include <string_view>

namespace fg::json {

// A JSON string of arbitrary bytes; invalid UTF-8 (possible only when the
// gateway skips validation) becomes U+FFFD instead of an exception.
std::string quote(std::string_view text);

// `{"error":<message quoted>}`
std::string error_object(std::string_view message);

// "invalid JSON: <nlohmann's reason>" for a text that does not parse.
std::string syntax_error(std::string_view text);

}  // namespace fg::json
