// framegate-loadgen's command line: the flags and values the bench scripts
// pass, the bounds every value is checked against, and the derived values.
#include "options.hpp"

#include <arpa/inet.h>

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

namespace {

using loadgen::mode;
using loadgen::options;
using loadgen::parse_options;

options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "framegate-loadgen");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

options parse_with_url(std::vector<std::string> args) {
  args.insert(args.begin(), {"--url", "ws://127.0.0.1:9000/"});
  return parse(std::move(args));
}

void expect_rejected(std::vector<std::string> args) {
  EXPECT_THROW(parse_with_url(args), CLI::ParseError) << ::testing::PrintToString(args);
}

std::string dotted(in_addr a) {
  char text[INET_ADDRSTRLEN];
  return inet_ntop(AF_INET, &a, text, sizeof text);
}

TEST(LoadgenOptions, UrlOnlyGivesTheDefaults) {
  const options o = parse({"--url", "ws://127.0.0.2:9000/rooms?x=1"});
  EXPECT_EQ(ntohs(o.target.sin_port), 9000);
  EXPECT_EQ(dotted(o.target.sin_addr), "127.0.0.2");
  EXPECT_EQ(o.host_header, "127.0.0.2:9000");
  EXPECT_EQ(o.path, "/rooms?x=1");
  EXPECT_EQ(o.run_mode, mode::rate);
  EXPECT_EQ(o.connections, 1u);
  EXPECT_EQ(o.size, 256u);
  EXPECT_EQ(o.message_opcode, loadgen::opcode::binary);
  EXPECT_FALSE(o.json_payload);
  EXPECT_EQ(o.duration_s, 10);
  EXPECT_EQ(o.drain_max_s, 60);
  EXPECT_TRUE(o.progress);
  EXPECT_FALSE(o.deflate);
  EXPECT_EQ(o.connect_timeout_s, 10.0 + 1.0 / 5000);
  EXPECT_EQ(parse({"--url", "ws://localhost:80"}).path, "/");
}

TEST(LoadgenOptions, BadUrlsAreRejected) {
  for (const char* url : {"http://127.0.0.1:80/", "wss://127.0.0.1:80/", "ws://127.0.0.1/", "ws://127.0.0.1:0/",
                          "ws://127.0.0.1:99999/", "ws://10.0.0.1:80/", "ws://example.com:80/", "ws://198.20.0.1:80/",
                          "ws://127.0.0.1:80/a,ws://127.0.0.2:80/b", "ws://127.0.0.1:80/,"})
    EXPECT_THROW(parse({"--url", url}), CLI::ParseError) << url;
  EXPECT_THROW(parse({"--connections", "5"}), CLI::ParseError);  // --url is required
}

TEST(LoadgenOptions, SeveralUrlsSpreadEachRoomOverThem) {
  const options o = parse({"--url", "ws://198.18.0.1:8080/rooms,ws://198.18.0.2:8080/rooms,ws://198.19.0.3:81/rooms",
                           "--mode", "rooms", "--rooms", "300", "--members", "3000"});
  ASSERT_EQ(o.endpoints.size(), 3u);
  EXPECT_EQ(dotted(o.target.sin_addr), "198.18.0.1");
  EXPECT_EQ(o.endpoints[2].host_header, "198.19.0.3:81");
  EXPECT_EQ(ntohs(o.endpoints[2].addr.sin_port), 81);
  EXPECT_EQ(o.path, "/rooms");
  // Room r's members are r, r + 300, r + 600, ...: one per URL in turn.
  for (std::uint32_t r : {0u, 1u, 299u}) {
    std::set<std::string> hosts;
    for (std::uint32_t k = 0; k < 3; ++k) hosts.insert(o.endpoint_of(r + 300 * k).host_header);
    EXPECT_EQ(hosts.size(), 3u) << r;
  }
  // Publishers 0, 1, 2 (the first members) too.
  EXPECT_NE(o.endpoint_of(0).host_header, o.endpoint_of(1).host_header);
  EXPECT_NE(o.endpoint_of(1).host_header, o.endpoint_of(2).host_header);
}

TEST(LoadgenOptions, TheBenchScriptsCommandLinesParse) {
  // run_echo.sh's rate workload, as it passes it.
  const options rate = parse({"--url",
                              "ws://127.0.0.1:9000/",
                              "--opcode",
                              "text",
                              "--server-pid",
                              "42",
                              "--json",
                              "/tmp/x.json",
                              "--mode",
                              "rate",
                              "--connections",
                              "200",
                              "--size",
                              "256",
                              "--rate-per-conn-ms",
                              "10",
                              "--warmup",
                              "0.5",
                              "--duration",
                              "2"});
  EXPECT_EQ(rate.message_opcode, loadgen::opcode::text);
  EXPECT_EQ(rate.server_pid, 42);
  EXPECT_EQ(rate.json_path, "/tmp/x.json");
  EXPECT_EQ(rate.connections, 200u);
  EXPECT_EQ(rate.warmup_s, 0.5);
  // run_deflate.sh's seed and idle workloads.
  const options seed = parse_with_url({"--payload", "json", "--deflate", "--deflate-threshold", "0", "--no-progress"});
  EXPECT_TRUE(seed.json_payload);
  EXPECT_TRUE(seed.deflate);
  EXPECT_EQ(seed.deflate_threshold, 0u);
  EXPECT_FALSE(seed.progress);
  const options idle =
      parse_with_url({"--mode", "idle", "--connections", "1000", "--source-ips", "127.0.0.2,127.0.0.3"});
  ASSERT_EQ(idle.source_ips.size(), 2u);
  EXPECT_EQ(dotted(idle.source_ips[1]), "127.0.0.3");
  // run_fanout.sh's rooms workload.
  const options rooms = parse_with_url(
      {"--mode",         "rooms", "--rooms",        "100",  "--members",     "1000",    "--publishers", "100",
       "--publish-rate", "100",   "--threads",      "2",    "--join-settle", "1",       "--drain",      "2",
       "--drain-max",    "10",    "--connect-rate", "2000", "--probe-pid",   "redis=7", "--probe-pid",  "gateway=8"});
  EXPECT_EQ(rooms.run_mode, mode::rooms);
  EXPECT_EQ(rooms.threads, 2u);
  ASSERT_EQ(rooms.probe_pids.size(), 2u);
  EXPECT_EQ(rooms.probe_pids[0], (std::pair<std::string, int>{"redis", 7}));
  EXPECT_EQ(rooms.probe_pids[1], (std::pair<std::string, int>{"gateway", 8}));
}

TEST(LoadgenOptions, InlineValuesAndRepeatsBehaveAsBefore) {
  const options o = parse_with_url({"--size=64", "--mode=window", "--size", "128"});
  EXPECT_EQ(o.size, 128u);  // the last one wins
  EXPECT_EQ(o.run_mode, mode::window);
  const options ips = parse_with_url({"--source-ips", "127.0.0.2", "--source-ips=127.0.0.3,127.0.0.4"});
  EXPECT_EQ(ips.source_ips.size(), 3u);  // lists append
}

TEST(LoadgenOptions, WholeNumbersAreDecimalAndBounded) {
  EXPECT_EQ(parse_with_url({"--connections", "1000000"}).connections, 1'000'000u);
  EXPECT_EQ(parse_with_url({"--window", "010"}).window, 10u);  // not octal
  EXPECT_EQ(parse_with_url({"--size", "0"}).size, 0u);
  for (const auto& args : std::vector<std::vector<std::string>>{{"--connections", "0"},
                                                                {"--connections", "1000001"},
                                                                {"--size", "-1"},
                                                                {"--size", "0x10"},
                                                                {"--size", "67108865"},
                                                                {"--threads", "257"},
                                                                {"--window", "0"},
                                                                {"--rooms", "0"},
                                                                {"--deflate-threshold", "-1"},
                                                                {"--publish-size", "16777217"},
                                                                {"--server-pid", "0"},
                                                                {"--server-pid", "abc"},
                                                                {"--members", "1.5"}})
    expect_rejected(args);
}

TEST(LoadgenOptions, NumbersAreFiniteAndBounded) {
  EXPECT_EQ(parse_with_url({"--duration", "3600"}).duration_s, 3600);
  EXPECT_EQ(parse_with_url({"--rate-per-conn-ms", "0.001"}).rate_per_conn_ms, 0.001);
  EXPECT_EQ(parse_with_url({"--warmup", "0"}).warmup_s, 0);
  EXPECT_EQ(parse_with_url({"--connect-rate", "1e9"}).connect_rate, 1e9);
  for (const auto& args : std::vector<std::vector<std::string>>{{"--duration", "0"},
                                                                {"--duration", "3600.5"},
                                                                {"--warmup", "-1"},
                                                                {"--drain", "601"},
                                                                {"--connect-rate", "0"},
                                                                {"--connect-rate", "inf"},
                                                                {"--connect-rate", "nan"},
                                                                {"--connect-timeout", "0"},
                                                                {"--rate-per-conn-ms", "0.0001"},
                                                                {"--publish-rate", "1e7"},
                                                                {"--join-settle", "1s"}})
    expect_rejected(args);
}

TEST(LoadgenOptions, ChoicesTakeOnlyTheirNames) {
  EXPECT_EQ(parse_with_url({"--mode", "idle"}).run_mode, mode::idle);
  EXPECT_FALSE(parse_with_url({"--publishers-join", "no"}).publishers_join);
  for (const auto& args : std::vector<std::vector<std::string>>{{"--mode", "0"},
                                                                {"--mode", "Rate"},
                                                                {"--opcode", "ping"},
                                                                {"--payload", "true"},
                                                                {"--publishers-join", "1"}})
    expect_rejected(args);
}

TEST(LoadgenOptions, ListsAndPairsAreChecked) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--source-ips", "127.0.0.2,10.0.0.1"},
                                                                {"--source-ips", "localhost"},
                                                                {"--probe-pid", "7"},
                                                                {"--probe-pid", "=7"},
                                                                {"--probe-pid", "redis=0"},
                                                                {"--probe-pid", "redis=x"},
                                                                {"--probe-pid", "a=1", "b=2"},
                                                                {"--bogus", "1"},
                                                                {"stray"}})
    expect_rejected(args);
}

TEST(LoadgenOptions, DerivedValues) {
  // --drain-max is at least --drain.
  EXPECT_EQ(parse_with_url({"--drain", "90"}).drain_max_s, 90);
  // Rooms mode: the connections are the members, plus the publishers when they do not join.
  EXPECT_EQ(parse_with_url({"--mode", "rooms", "--members", "50", "--publishers", "5"}).connections, 50u);
  EXPECT_EQ(parse_with_url({"--mode", "rooms", "--members", "50", "--publishers", "5", "--publishers-join", "no"})
                .connections,
            55u);
  // The connect limit grows with the connections, up to 600 s.
  EXPECT_EQ(parse_with_url({"--connections", "5000", "--connect-rate", "1000"}).connect_timeout_s, 15);
  EXPECT_EQ(parse_with_url({"--connections", "1000000", "--connect-rate", "1"}).connect_timeout_s, 600);
  EXPECT_EQ(parse_with_url({"--connect-timeout", "3"}).connect_timeout_s, 3);
}

TEST(LoadgenOptions, HelpIsRequestedAndNamesWhatTheScriptsLookFor) {
  EXPECT_THROW(parse({"--help"}), CLI::CallForHelp);
  EXPECT_THROW(parse({"-h"}), CLI::CallForHelp);
  const std::string help = loadgen::usage_text();
  // run_fanout.sh and run_deflate.sh check a binary's features this way.
  EXPECT_NE(help.find("--mode rate|window|idle|rooms"), std::string::npos) << help;
  EXPECT_NE(help.find("--deflate "), std::string::npos) << help;
  EXPECT_NE(help.find("Exit code: 0 ok"), std::string::npos) << help;
}

}  // namespace

TEST(LoadgenOptions, TokenLinesSkipBlanksCommentsAndCarriageReturns) {
  EXPECT_EQ(loadgen::parse_token_lines("a.b.c\n\n  # a comment\r\n d.e.f \r\nlast"),
            (std::vector<std::string>{"a.b.c", "d.e.f", "last"}));
  EXPECT_TRUE(loadgen::parse_token_lines("").empty());
  EXPECT_TRUE(loadgen::parse_token_lines("\n\r\n#only\n").empty());
}

TEST(LoadgenOptions, TokenTargetsJoinWithQuestionMarkOrAmpersand) {
  EXPECT_EQ(loadgen::token_targets("/", {}), (std::vector<std::string>{"/"}));
  EXPECT_EQ(loadgen::token_targets("/rooms", {"t1", "t2"}),
            (std::vector<std::string>{"/rooms?token=t1", "/rooms?token=t2"}));
  EXPECT_EQ(loadgen::token_targets("/rooms?x=1", {"t"}), (std::vector<std::string>{"/rooms?x=1&token=t"}));
}

TEST(LoadgenOptions, StormModeAndTokens) {
  const options o = parse_with_url({"--mode", "storm", "--connections", "50", "--token", "abc"});
  EXPECT_EQ(o.run_mode, mode::storm);
  EXPECT_STREQ(loadgen::mode_name(o.run_mode), "storm");
  EXPECT_EQ(o.targets, (std::vector<std::string>{"/?token=abc"}));
  EXPECT_EQ(o.token_count, 1u);
  EXPECT_EQ(parse_with_url({}).targets, (std::vector<std::string>{"/"}));
  expect_rejected({"--token-file", "/nonexistent/tokens"});
  expect_rejected({"--token", "a", "--token-file", "/dev/null"});
}
