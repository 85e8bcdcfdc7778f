#pragma once
// Command-line options of framegate-loadgen (parsed with CLI11).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <netinet/in.h>

#include "ws_codec.hpp"

namespace loadgen {

enum class mode { rate, window, idle, rooms, storm };

struct options {
  mode run_mode = mode::rate;
  std::string url = "ws://127.0.0.1:8080/";  // one URL, or several separated by commas
  sockaddr_in target{};                      // the first URL's
  std::string host_header;                   // HOST:PORT as in the first URL
  std::string path = "/";                    // the same for every URL
  // Every URL's address and Host header, in order (the first is target, host_header).
  struct endpoint {
    sockaddr_in addr{};
    std::string host_header;
  };
  std::vector<endpoint> endpoints;
  std::uint32_t connections = 1;
  std::size_t size = 256;
  opcode message_opcode = opcode::binary;
  bool json_payload = false;  // --payload json (see payload.hpp)
  double duration_s = 10;
  double warmup_s = 0;
  double drain_s = 5;       // stop waiting for echoes after this long without one
  double drain_max_s = 60;  // and after this long in any case
  unsigned threads = 1;
  std::vector<in_addr> source_ips;  // empty: the kernel picks
  double connect_rate = 5000;       // new connections per second, all threads together
  double connect_timeout_s = 0;     // 0: 10 s + connections / connect_rate
  double rate_per_conn_ms = 10;
  std::uint32_t window = 16;
  std::string json_path;
  int server_pid = 0;  // sample this local process's CPU and memory at the window edges
  bool progress = true;
  // permessage-deflate: offer it as a browser does, compress sends of at
  // least deflate_threshold bytes (Node ws's client default), inflate what
  // arrives compressed.
  bool deflate = false;
  std::size_t deflate_threshold = 1024;
  // rooms mode (see rooms.hpp)
  std::uint32_t rooms = 1;
  std::uint32_t members = 1000;
  std::uint32_t publishers = 1;
  bool publishers_join = true;
  double publish_rate = 10;                             // publishes per second per publisher
  double join_settle_s = 1;                             // after the joins, before the first publish
  std::size_t publish_size = 0;                         // pad each publish's data with JSON to about this size
  std::vector<std::pair<std::string, int>> probe_pids;  // --probe-pid NAME=PID: CPU over the window
  // --token / --token-file: the request targets, path?token=T (or path&token=T)
  // for each token, in order; just {path} without tokens. Connection slot i
  // uses targets[(i + k * connections) % size] on its k-th connect.
  std::vector<std::string> targets;
  std::size_t token_count = 0;

  // The URL that connection slot i uses: (i + i / rooms) mod URLs. In rooms
  // mode member i joins room i % rooms, so the shift spreads each room's
  // members over the URLs (with plain i mod URLs a room's members would all
  // share one URL whenever the URL count divides rooms), and publishers
  // 0, 1, 2, ... land on different URLs. Outside rooms mode rooms is 1.
  const endpoint& endpoint_of(std::uint32_t i) const {
    const std::uint32_t group = run_mode == mode::rooms ? rooms : 1;
    return endpoints[(static_cast<std::size_t>(i) + i / group) % endpoints.size()];
  }
};

// The tokens of a --token-file: one per line, surrounding blanks and a CR
// dropped, empty lines and lines starting with '#' skipped.
std::vector<std::string> parse_token_lines(std::string_view text);

// The request targets for `tokens` (see options::targets).
std::vector<std::string> token_targets(const std::string& path, const std::vector<std::string>& tokens);

// Parses the arguments (argv[0] is the program). Throws CLI::CallForHelp
// on --help / -h and another CLI::ParseError on a bad command line.
options parse_options(int argc, const char* const* argv);

// The --help text.
std::string usage_text();

const char* mode_name(mode m);

}  // namespace loadgen
