#include "json_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace loadgen {

double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

bool write_json_file(const std::string& path, const json& doc, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  const std::string text = doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !written) {
    error = path + ": write failed";
    return false;
  }
  return true;
}

}  // namespace loadgen
