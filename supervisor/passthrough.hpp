// Splits the `framegate up` command line into the supervisor's own options
// and the options it does not know, which go on to the gateway and every
// worker as FRAMEGATE_* environment variables. The supervisor cannot know
// every child option (the children grow options on their own schedule), so
// anything unknown is forwarded instead of rejected.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fg::supervisor {

// name (without dashes, as typed) -> value; a bare flag has the value "true".
using passthrough_map = std::map<std::string, std::string>;

struct split_arguments {
  std::vector<std::string> own;  // for the supervisor's CLI11 parser, in order
  passthrough_map passthrough;   // later occurrences win
};

// How the supervisor's parser treats a long option name ("listen", "help").
enum class option_kind { unknown, flag, takes_value };

// Walks `args` (without the program name and subcommand). Unknown long options
// take their value from `--name=value`, else from the next argument unless
// that starts with "--", else they are a bare flag. Throws
// std::invalid_argument for a name that cannot become an environment variable.
split_arguments split_passthrough(const std::vector<std::string>& args,
                                  const std::function<option_kind(std::string_view)>& kind_of);

// "max-message-size" -> "FRAMEGATE_MAX_MESSAGE_SIZE".
std::string env_name_for(std::string_view option_name);

// True for names made of letters, digits and inner dashes or underscores.
bool is_valid_option_name(std::string_view name);

}  // namespace fg::supervisor
