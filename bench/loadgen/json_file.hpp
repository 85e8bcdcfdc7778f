#pragma once
// The --json output: built as nlohmann::ordered_json (keys stay in the order
// they are set, so the file reads like the text summary) and written in one go.
#include <string>

#include <nlohmann/json.hpp>

namespace loadgen {

using json = nlohmann::ordered_json;

// v rounded to `digits` decimals: the precision the file has always had
// (printf "%.Nf"), not the shortest round-trip form of a measurement.
double rounded(double v, int digits);

// Writes doc, indented, to path. Bytes that are not UTF-8 (a server's close
// reason, say) become U+FFFD rather than an exception. On failure sets error
// ("PATH: reason") and returns false.
bool write_json_file(const std::string& path, const json& doc, std::string& error);

}  // namespace loadgen
