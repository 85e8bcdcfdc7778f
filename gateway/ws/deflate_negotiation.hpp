// permessage-deflate negotiation (RFC 7692 §7) as pure functions: the
// client's Sec-WebSocket-Extensions values in, the connection's parameters
// and the response header value out.
//
// Rules (each one cites where it comes from):
// - A header that does not follow RFC 6455 §9.1's grammar makes the
//   handshake malformed: 400 (RFC 6455 §4.2.1).
// - An offer with an unknown, duplicate or badly valued parameter is
//   declined and the next one is tried (RFC 7692 §7); the first valid
//   permessage-deflate offer is accepted.
// - The response always carries client_no_context_takeover unless client
//   takeover is configured and bounded (§7.1.1.2 lets a server add it), and
//   server_no_context_takeover unless server takeover is configured and the
//   client allows it (§7.1.1.1): by default no connection holds zlib state.
// - server_max_window_bits: the offered value capped by --deflate-window-bits,
//   echoed when offered (§7.1.2.1, MUST) or when the cap is below 15 (MAY).
// - client_max_window_bits matters only with client takeover: then the
//   client's window is capped by --deflate-window-bits, which needs the
//   client to have offered the parameter (§7.1.2.2: the response MUST NOT
//   carry it otherwise), else takeover falls back to
//   client_no_context_takeover.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/ws/deflate_options.hpp"

namespace fg::ws {

struct extension_param {
  std::string_view name;
  std::optional<std::string> value;  // unquoted
  bool operator==(const extension_param&) const = default;
};

struct extension_offer {
  std::string_view name;
  std::vector<extension_param> params;
};

// Appends the extensions of one header value (RFC 6455 §9.1:
// `name *( ";" param [ "=" ( token | quoted-string ) ] )`, comma-separated,
// empty elements allowed as RFC 7230 §7 says). False if it is malformed.
bool parse_extensions(std::string_view header_value, std::vector<extension_offer>& out);

// Why a permessage-deflate offer is declined (RFC 7692 §7).
enum class offer_error : std::uint8_t {
  none,
  unknown_parameter,    // §7: a parameter not defined for an offer
  duplicate_parameter,  // §7: the same parameter twice
  invalid_value,        // §7.1.1, §7.1.2: a value where none is allowed, none where one is required, not 8..15
};

std::string_view to_string(offer_error e) noexcept;

struct deflate_offer {
  bool server_no_context_takeover = false;
  bool client_no_context_takeover = false;
  std::uint8_t server_max_window_bits = 0;        // 0: absent
  bool client_max_window_bits = false;            // present, with or without a value
  std::uint8_t client_max_window_bits_value = 0;  // 0: no value
};

offer_error parse_deflate_offer(std::span<const extension_param> params, deflate_offer& out);

struct deflate_agreement {
  deflate_params params;
  std::string response;  // the Sec-WebSocket-Extensions value
};

// The agreement for a valid offer under the gateway's options.
deflate_agreement accept_offer(const deflate_offer& offer, const deflate_options& opt);

enum class negotiation_status : std::uint8_t { declined, accepted, malformed_header };

struct deflate_negotiation {
  negotiation_status status = negotiation_status::declined;
  deflate_agreement agreement{};
};

// Every Sec-WebSocket-Extensions value of the request, in order.
deflate_negotiation negotiate_deflate(std::span<const std::string_view> header_values, const deflate_options& opt);

}  // namespace fg::ws
