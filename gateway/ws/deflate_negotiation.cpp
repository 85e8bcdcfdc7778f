#include "gateway/ws/deflate_negotiation.hpp"

#include <algorithm>
#include <string_view>

namespace fg::ws {

namespace {

constexpr std::string_view extension_name = "permessage-deflate";

// RFC 7230 §3.2.6 tchar.
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

// A cursor over one header value.
struct scanner {
  std::string_view s;
  std::size_t at = 0;

  [[nodiscard]] bool done() const { return at == s.size(); }
  [[nodiscard]] char peek() const { return s[at]; }
  void skip_ows() {
    while (!done() && (peek() == ' ' || peek() == '\t')) ++at;
  }
  std::string_view token() {
    const std::size_t begin = at;
    while (!done() && is_tchar(peek())) ++at;
    return s.substr(begin, at - begin);
  }
  // RFC 7230 §3.2.6 quoted-string, unescaped; nullopt if unterminated or bad.
  std::optional<std::string> quoted() {
    std::string out;
    ++at;  // the opening DQUOTE
    while (!done()) {
      const char c = s[at++];
      if (c == '"') return out;
      if (c == '\\') {
        if (done()) return std::nullopt;
        out.push_back(s[at++]);
      } else if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
        return std::nullopt;
      } else {
        out.push_back(c);
      }
    }
    return std::nullopt;
  }
};

// §7.1.2.1 / §7.1.2.2: "8".."15", decimal, no leading zero.
std::uint8_t window_bits_value(std::string_view v) {
  if (v.size() == 1 && (v[0] == '8' || v[0] == '9')) return static_cast<std::uint8_t>(v[0] - '0');
  if (v.size() == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5') return static_cast<std::uint8_t>(10 + (v[1] - '0'));
  return 0;
}

}  // namespace

bool parse_extensions(std::string_view header_value, std::vector<extension_offer>& out) {
  scanner sc{header_value};
  while (true) {
    sc.skip_ows();
    if (sc.done()) return true;
    if (sc.peek() == ',') {  // an empty list element
      ++sc.at;
      continue;
    }
    extension_offer ext;
    ext.name = sc.token();
    if (ext.name.empty()) return false;
    sc.skip_ows();
    while (!sc.done() && sc.peek() == ';') {
      ++sc.at;
      sc.skip_ows();
      extension_param p;
      p.name = sc.token();
      if (p.name.empty()) return false;
      sc.skip_ows();
      if (!sc.done() && sc.peek() == '=') {
        ++sc.at;
        sc.skip_ows();
        if (!sc.done() && sc.peek() == '"') {
          p.value = sc.quoted();
          // RFC 6455 §9.1: once unescaped, a quoted value must be a token.
          if (!p.value || !is_token(*p.value)) return false;
        } else {
          const auto v = sc.token();
          if (v.empty()) return false;
          p.value = std::string(v);
        }
        sc.skip_ows();
      }
      ext.params.push_back(std::move(p));
    }
    out.push_back(std::move(ext));
    if (sc.done()) return true;
    if (sc.peek() != ',') return false;
    ++sc.at;
  }
}

std::string_view to_string(offer_error e) noexcept {
  switch (e) {
    case offer_error::none: return "none";
    case offer_error::unknown_parameter: return "unknown_parameter";
    case offer_error::duplicate_parameter: return "duplicate_parameter";
    case offer_error::invalid_value: return "invalid_value";
  }
  return "unknown";
}

offer_error parse_deflate_offer(std::span<const extension_param> params, deflate_offer& out) {
  out = {};
  for (const auto& p : params) {
    offer_error e = offer_error::none;
    // §7.1.1: the two takeover parameters have no value.
    const auto set_flag = [&](bool& field) {
      if (field) return offer_error::duplicate_parameter;
      field = true;
      return p.value ? offer_error::invalid_value : offer_error::none;
    };
    if (p.name == "server_no_context_takeover") {
      e = set_flag(out.server_no_context_takeover);
    } else if (p.name == "client_no_context_takeover") {
      e = set_flag(out.client_no_context_takeover);
    } else if (p.name == "server_max_window_bits") {
      if (out.server_max_window_bits != 0) return offer_error::duplicate_parameter;
      // §7.1.2.1: a value is required.
      out.server_max_window_bits = p.value ? window_bits_value(*p.value) : 0;
      if (out.server_max_window_bits == 0) e = offer_error::invalid_value;
    } else if (p.name == "client_max_window_bits") {
      if (out.client_max_window_bits) return offer_error::duplicate_parameter;
      out.client_max_window_bits = true;
      // §7.1.2.2: no value (the client supports the parameter) or 8..15.
      if (p.value) out.client_max_window_bits_value = window_bits_value(*p.value);
      if (p.value && out.client_max_window_bits_value == 0) e = offer_error::invalid_value;
    } else {
      e = offer_error::unknown_parameter;
    }
    if (e != offer_error::none) return e;
  }
  return offer_error::none;
}

deflate_agreement accept_offer(const deflate_offer& offer, const deflate_options& opt) {
  const auto cap = static_cast<std::uint8_t>(opt.max_window_bits);
  deflate_agreement a;
  auto& p = a.params;
  p.enabled = true;
  p.server_takeover = opt.server_takeover && !offer.server_no_context_takeover;
  p.server_window_bits = offer.server_max_window_bits != 0 ? std::min(offer.server_max_window_bits, cap) : cap;
  // The client's window can only be capped through client_max_window_bits,
  // which it must have offered; with the cap at 15 nothing needs capping.
  p.client_takeover =
      opt.client_takeover && !offer.client_no_context_takeover && (offer.client_max_window_bits || cap == 15);
  if (p.client_takeover) {
    const std::uint8_t offered = offer.client_max_window_bits_value != 0 ? offer.client_max_window_bits_value : 15;
    p.client_window_bits = std::min(offered, cap);
  }

  a.response = extension_name;
  if (!p.server_takeover) a.response += "; server_no_context_takeover";
  if (!p.client_takeover) a.response += "; client_no_context_takeover";
  if (offer.server_max_window_bits != 0 || p.server_window_bits < 15)
    a.response += "; server_max_window_bits=" + std::to_string(p.server_window_bits);
  if (p.client_takeover && offer.client_max_window_bits)
    a.response += "; client_max_window_bits=" + std::to_string(p.client_window_bits);
  return a;
}

deflate_negotiation negotiate_deflate(std::span<const std::string_view> header_values, const deflate_options& opt) {
  deflate_negotiation n;
  std::vector<extension_offer> offers;
  for (const auto value : header_values)
    if (!parse_extensions(value, offers)) {
      n.status = negotiation_status::malformed_header;
      return n;
    }
  for (const auto& ext : offers) {
    if (ext.name != extension_name) continue;  // other extensions are not supported: ignored
    deflate_offer offer;
    if (parse_deflate_offer(ext.params, offer) != offer_error::none) continue;
    n.status = negotiation_status::accepted;
    n.agreement = accept_offer(offer, opt);
    return n;
  }
  return n;
}

}  // namespace fg::ws
