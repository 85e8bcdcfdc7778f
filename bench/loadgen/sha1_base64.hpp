#pragma once
// Just enough SHA-1 and base64 to check the server's Sec-WebSocket-Accept:
// the load generator must not trust a server that answers 101 with a wrong
// key, and it must not depend on OpenSSL or the gateway's own code.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace loadgen {

std::array<std::uint8_t, 20> sha1(std::string_view data);
std::string base64_encode(const std::uint8_t* data, std::size_t len);

}  // namespace loadgen
