#include "common/json/json_text.hpp"

#include <nlohmann/json.hpp>

namespace fg::json {

std::string quote(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string error_object(std::string_view message) { return "{\"error\":" + quote(message) + "}"; }

std::string syntax_error(std::string_view text) {
  try {
    [[maybe_unused]] const auto parsed = nlohmann::json::parse(text);  // throws the reason
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's reason without its "[json.exception.parse_error.101] " tag.
    std::string_view what = e.what();
    if (const auto tag_end = what.find("] "); what.starts_with("[json.exception") && tag_end != std::string_view::npos)
      what.remove_prefix(tag_end + 2);
    return "invalid JSON: " + std::string(what);
  } catch (const std::exception&) {
  }
  return "invalid JSON";
}

}  // namespace fg::json
