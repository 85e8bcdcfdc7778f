// Small JSON texts both processes answer with: quoted strings, error
// objects `{"error":"..."}` (the /rooms app's and the admin API's) and the
// one-line reason a text is not JSON.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fg::json {

// Arrays and objects nested deeper than this are refused: it bounds the
// validator's work and memory on a text like 1 MiB of '['.
inline constexpr std::size_t max_depth = 512;

// A JSON string of arbitrary bytes; invalid UTF-8 (possible only when the
// gateway skips validation) becomes U+FFFD instead of an exception.
std::string quote(std::string_view text);

// `{"error":<message quoted>}`
std::string error_object(std::string_view message);

// Validates `text` in one streaming pass that builds no document (strings
// are the only allocation, each at most as long as the text): nothing
// when it is one JSON value nested at most `depth_limit` deep, else
// "invalid JSON: <reason>" naming where and what is wrong.
std::optional<std::string> check_syntax(std::string_view text, std::size_t depth_limit = max_depth);

// check_syntax's reason for a text already known not to parse.
std::string syntax_error(std::string_view text);

}  // namespace fg::json
