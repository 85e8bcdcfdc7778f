#include "gateway/auth/jwt_token.hpp"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "gateway/auth/base64url.hpp"

namespace fg::auth {

namespace {

using json = nlohmann::json;

// A JSON object decoded from one base64url part, or a discarded value.
json decode_object(std::string_view part) {
  std::string text;
  if (!base64url_decode(part, text)) return json(json::value_t::discarded);
  auto j = json::parse(text, nullptr, false);
  if (!j.is_object()) return json(json::value_t::discarded);
  return j;
}

std::optional<jwt_alg> alg_of(std::string_view name) {
  if (name == "HS256") return jwt_alg::hs256;
  if (name == "HS384") return jwt_alg::hs384;
  if (name == "HS512") return jwt_alg::hs512;
  if (name == "RS256") return jwt_alg::rs256;
  if (name == "ES256") return jwt_alg::es256;
  if (name == "EdDSA") return jwt_alg::eddsa;
  return std::nullopt;
}

// A NumericDate (RFC 7519 §2): a JSON number of seconds; false if it is not one.
bool numeric_date(const json& v, std::optional<std::int64_t>& out) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})
      return false;
    out = v.get<std::int64_t>();
    return true;
  }
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  // Within ±2^53 seconds: beyond any real date, and exactly representable.
  if (!std::isfinite(d) || std::fabs(d) > 9007199254740992.0) return false;
  out = static_cast<std::int64_t>(std::floor(d));
  return true;
}

bool string_array(const json& v, std::vector<std::string>& out) {
  if (!v.is_array()) return false;
  out.clear();
  out.reserve(v.size());
  for (const auto& item : v) {
    if (!item.is_string()) return false;
    out.push_back(item.get<std::string>());
  }
  return true;
}

// Registered claims of the wrong type make the token malformed; unknown
// claims are ignored (RFC 7519 §4).
bool read_claims(const json& payload, jwt_claims& c) {
  if (const auto it = payload.find("sub"); it != payload.end()) {
    if (!it->is_string()) return false;
    c.sub = it->get<std::string>();
  }
  if (const auto it = payload.find("iss"); it != payload.end()) {
    if (!it->is_string()) return false;
    c.iss = it->get<std::string>();
  }
  if (const auto it = payload.find("aud"); it != payload.end()) {
    if (it->is_string())
      c.aud.assign(1, it->get<std::string>());
    else if (!string_array(*it, c.aud))
      return false;
  }
  if (const auto it = payload.find("exp"); it != payload.end() && !numeric_date(*it, c.exp)) return false;
  if (const auto it = payload.find("nbf"); it != payload.end() && !numeric_date(*it, c.nbf)) return false;
  if (const auto it = payload.find("rooms"); it != payload.end()) {
    if (!string_array(*it, c.rooms)) return false;
    c.has_rooms = true;
  }
  return true;
}

}  // namespace

auth_error parse_jwt(std::string_view text, std::size_t max_bytes, jwt_token& out) {
  out = jwt_token{};
  if (text.size() > max_bytes) return auth_error::too_large;
  const auto dot1 = text.find('.');
  if (dot1 == std::string_view::npos) return auth_error::malformed;
  const auto dot2 = text.find('.', dot1 + 1);
  // Exactly three parts: five would be a JWE (RFC 7516), which is not accepted.
  if (dot2 == std::string_view::npos || text.find('.', dot2 + 1) != std::string_view::npos)
    return auth_error::malformed;

  const json header = decode_object(text.substr(0, dot1));
  if (header.is_discarded()) return auth_error::malformed;
  const auto alg = header.find("alg");
  if (alg == header.end() || !alg->is_string()) return auth_error::malformed;
  const auto known = alg_of(alg->get_ref<const std::string&>());
  // "none" (RFC 7518 §3.6) is never accepted, nor any algorithm not listed.
  if (!known) return auth_error::unsupported_algorithm;
  out.alg = *known;
  // RFC 7515 §4.1.11: extensions marked critical must be understood; none are.
  if (header.contains("crit")) return auth_error::unsupported_algorithm;
  if (const auto kid = header.find("kid"); kid != header.end()) {
    if (!kid->is_string()) return auth_error::malformed;
    out.kid = kid->get<std::string>();
  }

  const json payload = decode_object(text.substr(dot1 + 1, dot2 - dot1 - 1));
  if (payload.is_discarded() || !read_claims(payload, out.claims)) return auth_error::malformed;
  if (!base64url_decode(text.substr(dot2 + 1), out.signature) || out.signature.empty()) return auth_error::malformed;
  out.signing_input = text.substr(0, dot2);
  return auth_error::none;
}

}  // namespace fg::auth
