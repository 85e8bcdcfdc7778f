// Secrets are read from files (--api-token-file, --redis-password-file), so
// that they appear neither in `ps` nor in shell history nor in the logs.
#pragma once

#include <string>
#include <string_view>

namespace fg {

// The content of `path` without one trailing newline ("\n" or "\r\n", as
// `echo` and editors leave it). Throws fg::config_error naming `option` and
// the file (never its content) when the file cannot be read or the secret
// is empty.
std::string read_secret_file(const std::string& path, std::string_view option);

}  // namespace fg
