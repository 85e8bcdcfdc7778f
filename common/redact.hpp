// Secrets never reach a log line: every URL that may carry a password goes
// through redact_url before it is printed, in every binary.
#pragma once

#include <string>
#include <string_view>

namespace fg {

// What a secret is shown as.
inline constexpr std::string_view redacted = "***";

// `url` with its secrets replaced by "***": the password of the userinfo
// (redis://user:***@host; a userinfo without ':' is hidden whole, since some
// clients read it as the password) and the value of any password=, pass=,
// token= or secret= query parameter (unix:///s?password=***). Anything else
// is kept as written, so the result still tells where a process connects.
std::string redact_url(std::string_view url);

}  // namespace fg
