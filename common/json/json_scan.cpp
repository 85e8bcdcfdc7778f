#include "common/json/json_scan.hpp"

#include <nlohmann/json.hpp>

namespace fg::json {

namespace {

bool is_whitespace(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Offset just past the string starting at `pos` (a '"').
std::size_t skip_string(std::string_view text, std::size_t pos) noexcept {
  for (++pos; pos < text.size(); ++pos) {
    if (text[pos] == '\\') {
      ++pos;  // the escaped byte can be '"'; \uXXXX's digits are plain bytes
    } else if (text[pos] == '"') {
      return pos + 1;
    }
  }
  return text.size();
}

}  // namespace

std::size_t skip_whitespace(std::string_view text, std::size_t pos) noexcept {
  while (pos < text.size() && is_whitespace(text[pos])) ++pos;
  return pos;
}

std::size_t skip_value(std::string_view text, std::size_t pos) noexcept {
  if (pos >= text.size()) return text.size();
  const char first = text[pos];
  if (first == '"') return skip_string(text, pos);
  if (first == '{' || first == '[') {
    std::size_t depth = 0;
    while (pos < text.size()) {
      const char c = text[pos];
      if (c == '"') {
        pos = skip_string(text, pos);
        continue;
      }
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return pos + 1;
      }
      ++pos;
    }
    return text.size();
  }
  // A number or a literal: runs to the next delimiter.
  while (pos < text.size() && text[pos] != ',' && text[pos] != '}' && text[pos] != ']' && !is_whitespace(text[pos]))
    ++pos;
  return pos;
}

value_kind kind_of(std::string_view raw) noexcept {
  if (raw.empty()) return value_kind::null;
  switch (raw.front()) {
    case '{': return value_kind::object;
    case '[': return value_kind::array;
    case '"': return value_kind::string;
    case 't':
    case 'f': return value_kind::boolean;
    case 'n': return value_kind::null;
    default: return value_kind::number;
  }
}

std::string decode_string(std::string_view raw) {
  if (raw.size() < 2) return {};
  if (raw.find('\\') == std::string_view::npos) return std::string(raw.substr(1, raw.size() - 2));
  // Escapes (\uXXXX, surrogate pairs): let the validating parser decode.
  return nlohmann::json::parse(raw).get<std::string>();
}

bool string_equals(std::string_view raw, std::string_view name) {
  if (raw.size() < 2) return false;
  const std::string_view inner = raw.substr(1, raw.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner == name;
  return decode_string(raw) == name;
}

}  // namespace fg::json
