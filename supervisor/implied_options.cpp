#include "supervisor/implied_options.hpp"

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include <CLI/TypeTools.hpp>

namespace fg::supervisor {

namespace {

// The value a child will see for `name`: the pass-through's (a flag or the
// config file), else its environment variable's, which children inherit.
std::optional<std::string> child_value(const supervisor_options& opts, const std::string& name) {
  if (const auto it = opts.passthrough.find(name); it != opts.passthrough.end()) return it->second;
  if (const char* env = std::getenv(env_name_for(name).c_str())) return std::string(env);
  return std::nullopt;
}

// Sets a child option that was not given, and says it was implied.
void imply(supervisor_options& opts, const std::string& name, std::string value) {
  opts.passthrough[name] = std::move(value);
  opts.implied.insert(name);
}

// Copies a gateway setting to the workers' option of the same meaning,
// unless the workers' own was given.
void follow(supervisor_options& opts, const std::string& gateway_name, const std::string& worker_name) {
  if (child_value(opts, worker_name)) return;
  if (const auto value = child_value(opts, gateway_name)) imply(opts, worker_name, *value);
}

}  // namespace

bool flag_value_is_on(std::string_view value) {
  bool on = false;
  return CLI::detail::lexical_cast(std::string(value), on) && on;
}

bool imply_publish_deflate(supervisor_options& opts) {
  // Only where every worker that reads the room messages is one of ours,
  // of this version: behind the private Redis or the gateway's hub.
  if (!(opts.private_redis() || opts.no_redis) || child_value(opts, "publish-deflate")) return false;
  const auto deflate = child_value(opts, "deflate");
  if (!deflate || !flag_value_is_on(*deflate)) return false;
  // With server context takeover each member's compression is its own:
  // one made at the publisher would go unused.
  const auto takeover = child_value(opts, "deflate-takeover").value_or("none");
  if (takeover != "none" && takeover != "client") return false;
  imply(opts, "publish-deflate", "true");
  follow(opts, "deflate-threshold", "publish-deflate-threshold");
  follow(opts, "deflate-level", "publish-deflate-level");
  return true;
}

}  // namespace fg::supervisor
