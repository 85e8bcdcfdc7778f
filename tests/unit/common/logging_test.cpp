#include "common/logging.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

namespace {

TEST(Logging, JsonLinesStayValidJsonWhateverTheMessage) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("gateway", sink);
  logger.set_formatter(fg::json_formatter());
  const std::string nasty = "a \"quoted\" \\ path\nnext\tline \x01 caf\xc3\xa9";
  logger.info("closing conn={}: {}", 42, nasty);
  const std::string line = out.str();
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per entry";
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["component"], "gateway");
  EXPECT_EQ(j["msg"], "closing conn=42: " + nasty);
  EXPECT_TRUE(j["pid"].is_number());
  EXPECT_TRUE(j["time"].is_string());
}

}  // namespace
