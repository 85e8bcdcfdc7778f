// Reads a child's output pipe and hands it on one whole line at a time, so
// lines of different children never interleave mid-line on our stderr.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace fg::supervisor {

class line_relay : public std::enable_shared_from_this<line_relay> {
 public:
  using line_handler = std::function<void(std::string_view line)>;
  using closed_handler = std::function<void()>;

  // Takes ownership of `fd` (the read end) and reads until end of file. The
  // relay keeps itself alive while reading, so output written just before a
  // child exits is still relayed after the child object moved on.
  static std::shared_ptr<line_relay> start(boost::asio::io_context& io, int fd, line_handler on_line,
                                           closed_handler on_closed);

  bool open() const { return open_; }

  line_relay(boost::asio::io_context& io, int fd, line_handler on_line, closed_handler on_closed);

 private:
  // A child that never writes a newline must not make us buffer without bound.
  static constexpr std::size_t max_line = 64 * 1024;

  void read_more();
  void consume(std::size_t n);
  void finish();

  boost::asio::posix::stream_descriptor pipe_;
  std::array<char, 16 * 1024> chunk_{};
  std::string partial_;
  line_handler on_line_;
  closed_handler on_closed_;
  bool open_ = true;
};

}  // namespace fg::supervisor
