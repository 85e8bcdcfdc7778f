// Child options `framegate up` turns on because of others it was given:
// what an operator of a one-host cluster would otherwise have to know to
// add by hand.
#pragma once

#include <string_view>

#include "supervisor/options.hpp"

namespace fg::supervisor {

// With the private Redis, or without Redis (the gateway's hub), every
// worker that reads room messages is one of ours, of this version, so a
// gateway told to compress (--deflate) without server context takeover
// (--deflate-takeover none or client, the default none) takes room
// messages compressed once, at the worker that publishes them
// (--publish-deflate), instead of compressing each once per Send; the
// workers then compress at the gateway's --deflate-threshold and
// --deflate-level. Nothing is implied where --publish-deflate was set (by
// flag, file or environment, on or off) or where the Redis is another's:
// workers of an older version there would drop such messages. A child
// option counts as given by flag or file (opts.passthrough) or by its
// FRAMEGATE_* variable in this process's environment. Returns whether it
// turned --publish-deflate on.
bool imply_publish_deflate(supervisor_options& opts);

// How a child reads a flag's value (CLI11's rule: true, on, yes, enable,
// t, y, + or a positive number).
bool flag_value_is_on(std::string_view value);

}  // namespace fg::supervisor
