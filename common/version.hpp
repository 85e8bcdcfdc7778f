// The version every framegate binary reports (Register, --version,
// framegate_build_info): the CMake project version.
#pragma once

#include <string_view>

namespace fg {
inline constexpr std::string_view version = FRAMEGATE_VERSION;
}  // namespace fg
