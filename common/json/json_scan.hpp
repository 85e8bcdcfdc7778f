// A raw-span scanner for JSON text that has already been validated (by
// json::check_syntax): it finds the members of the top-level object
// and hands out each value as the exact bytes the sender wrote, so an app
// can forward a value without re-serializing it (numbers like 2.50 and
// the sender's spacing survive byte for byte).
//
// Not a validator: on invalid JSON the results are unspecified (but every
// access stays inside the text). Iterative, so deep nesting cannot
// overflow the stack.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fg::json {

enum class value_kind : unsigned char { object, array, string, number, boolean, null };

// The kind of a raw value (its first byte decides).
value_kind kind_of(std::string_view raw_value) noexcept;

// Offset just past the value starting at `pos` (no leading whitespace).
std::size_t skip_value(std::string_view text, std::size_t pos) noexcept;
std::size_t skip_whitespace(std::string_view text, std::size_t pos) noexcept;

// The decoded content of a raw JSON string ("a\u0062" -> "ab").
std::string decode_string(std::string_view raw_string);

// Whether a raw JSON string decodes to `name`; allocates only when the
// raw string holds escapes.
bool string_equals(std::string_view raw_string, std::string_view name);

// Calls fn(raw_key, raw_value) for each member of the top-level object,
// in order (duplicates included). Returns false, calling nothing, when the
// text is not an object.
template <class Fn>
bool for_each_member(std::string_view text, Fn&& fn) {
  std::size_t pos = skip_whitespace(text, 0);
  if (pos >= text.size() || text[pos] != '{') return false;
  pos = skip_whitespace(text, pos + 1);
  while (pos < text.size() && text[pos] == '"') {
    const std::size_t key_end = skip_value(text, pos);
    const std::string_view key = text.substr(pos, key_end - pos);
    pos = skip_whitespace(text, key_end);
    if (pos >= text.size() || text[pos] != ':') return true;
    pos = skip_whitespace(text, pos + 1);
    const std::size_t value_end = skip_value(text, pos);
    fn(key, text.substr(pos, value_end - pos));
    pos = skip_whitespace(text, value_end);
    if (pos >= text.size() || text[pos] != ',') break;
    pos = skip_whitespace(text, pos + 1);
  }
  return true;
}

// Calls fn(raw_value) for each element of the array `raw_array` (a raw
// value as for_each_member hands it out), in order. Returns false, calling
// nothing, when it is not an array.
template <class Fn>
bool for_each_element(std::string_view raw_array, Fn&& fn) {
  if (raw_array.empty() || raw_array.front() != '[') return false;
  std::size_t pos = skip_whitespace(raw_array, 1);
  while (pos < raw_array.size() && raw_array[pos] != ']') {
    const std::size_t value_end = skip_value(raw_array, pos);
    if (value_end == pos) break;  // not valid JSON: stop rather than loop
    fn(raw_array.substr(pos, value_end - pos));
    pos = skip_whitespace(raw_array, value_end);
    if (pos >= raw_array.size() || raw_array[pos] != ',') break;
    pos = skip_whitespace(raw_array, pos + 1);
  }
  return true;
}

}  // namespace fg::json
