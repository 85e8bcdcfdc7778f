#include "supervisor/passthrough.hpp"

#include <cctype>
#include <stdexcept>

namespace fg::supervisor {

namespace {

bool starts_with_dashes(std::string_view arg) { return arg.size() > 2 && arg.substr(0, 2) == "--"; }

}  // namespace

bool is_valid_option_name(std::string_view name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

std::string env_name_for(std::string_view option_name) {
  std::string out = "FRAMEGATE_";
  for (const char c : option_name)
    out.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

split_arguments split_passthrough(const std::vector<std::string>& args,
                                  const std::function<option_kind(std::string_view)>& kind_of) {
  split_arguments out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!starts_with_dashes(arg)) {
      out.own.push_back(arg);  // CLI11 reports stray positionals and short options
      continue;
    }
    const auto eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const option_kind kind = kind_of(name);
    if (kind != option_kind::unknown) {
      out.own.push_back(arg);
      // Keep a known option's separate value with it, even if it starts with "--".
      if (kind == option_kind::takes_value && eq == std::string::npos && i + 1 < args.size())
        out.own.push_back(args[++i]);
      continue;
    }
    if (!is_valid_option_name(name))
      throw std::invalid_argument("cannot pass option '" + arg + "' on: names are letters, digits and dashes");
    if (eq != std::string::npos)
      out.passthrough[name] = arg.substr(eq + 1);
    else if (i + 1 < args.size() && !starts_with_dashes(args[i + 1]))
      out.passthrough[name] = args[++i];
    else
      out.passthrough[name] = "true";
  }
  return out;
}

}  // namespace fg::supervisor
