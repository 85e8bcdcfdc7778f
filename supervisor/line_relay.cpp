#include "supervisor/line_relay.hpp"

#include <boost/asio/buffer.hpp>

namespace fg::supervisor {

std::shared_ptr<line_relay> line_relay::start(boost::asio::io_context& io, int fd, line_handler on_line,
                                              closed_handler on_closed) {
  auto relay = std::make_shared<line_relay>(io, fd, std::move(on_line), std::move(on_closed));
  relay->read_more();
  return relay;
}

line_relay::line_relay(boost::asio::io_context& io, int fd, line_handler on_line, closed_handler on_closed)
    : pipe_(io, fd), on_line_(std::move(on_line)), on_closed_(std::move(on_closed)) {}

void line_relay::read_more() {
  pipe_.async_read_some(boost::asio::buffer(chunk_),
                        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                          if (n > 0) self->consume(n);
                          if (ec)
                            self->finish();  // end of file: every writer (the child) is gone
                          else
                            self->read_more();
                        });
}

void line_relay::consume(std::size_t n) {
  std::string_view data(chunk_.data(), n);
  while (!data.empty()) {
    const auto nl = data.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(data);
      if (partial_.size() >= max_line) {
        on_line_(partial_);
        partial_.clear();
      }
      return;
    }
    if (partial_.empty()) {
      on_line_(data.substr(0, nl));  // the usual case: no copy
    } else {
      partial_.append(data.substr(0, nl));
      on_line_(partial_);
      partial_.clear();
    }
    data.remove_prefix(nl + 1);
  }
}

void line_relay::finish() {
  if (!partial_.empty()) on_line_(partial_);
  partial_.clear();
  open_ = false;
  boost::system::error_code ignored;
  pipe_.close(ignored);
  if (on_closed_) on_closed_();
}

}  // namespace fg::supervisor
