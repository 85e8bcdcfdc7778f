#include "common/json/json_text.hpp"

#include <nlohmann/json.hpp>

namespace fg::json {

namespace {

// A SAX handler that keeps nothing but the nesting depth and, on the
// first error, the reason: validation without a DOM.
class syntax_checker {
 public:
  using json = nlohmann::json;

  explicit syntax_checker(std::size_t depth_limit) noexcept : depth_limit_(depth_limit) {}

  bool null() noexcept { return true; }
  bool boolean(bool) noexcept { return true; }
  bool number_integer(json::number_integer_t) noexcept { return true; }
  bool number_unsigned(json::number_unsigned_t) noexcept { return true; }
  bool number_float(json::number_float_t, const json::string_t&) noexcept { return true; }
  bool string(json::string_t&) noexcept { return true; }
  bool binary(json::binary_t&) noexcept { return true; }
  bool key(json::string_t&) noexcept { return true; }
  bool start_object(std::size_t) { return enter(); }
  bool start_array(std::size_t) { return enter(); }
  bool end_object() noexcept { return leave(); }
  bool end_array() noexcept { return leave(); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // nlohmann's reason without its "[json.exception.parse_error.101] " tag.
    std::string_view what = e.what();
    if (const auto tag_end = what.find("] "); what.starts_with("[json.exception") && tag_end != std::string_view::npos)
      what.remove_prefix(tag_end + 2);
    reason_ = "invalid JSON: " + std::string(what);
    return false;
  }

  [[nodiscard]] std::string take_reason() && { return std::move(reason_); }

 private:
  bool enter() {
    // Refusing here stops the parser at once: the rest is never read.
    if (++depth_ <= depth_limit_) return true;
    reason_ = "invalid JSON: nested more than " + std::to_string(depth_limit_) + " levels deep";
    return false;
  }
  bool leave() noexcept {
    --depth_;
    return true;
  }

  std::size_t depth_limit_;
  std::size_t depth_ = 0;
  std::string reason_;
};

}  // namespace

std::string quote(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string error_object(std::string_view message) { return "{\"error\":" + quote(message) + "}"; }

std::optional<std::string> check_syntax(std::string_view text, std::size_t depth_limit) {
  syntax_checker checker(depth_limit);
  try {
    if (nlohmann::json::sax_parse(text.begin(), text.end(), &checker)) return std::nullopt;
  } catch (const std::exception&) {
    // sax_parse reports through parse_error; anything else is still a no.
  }
  std::string reason = std::move(checker).take_reason();
  if (reason.empty()) reason = "invalid JSON";
  return reason;
}

std::string syntax_error(std::string_view text) { return check_syntax(text).value_or("invalid JSON"); }

}  // namespace fg::json
