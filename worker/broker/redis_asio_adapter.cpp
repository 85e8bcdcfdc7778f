#include "worker/broker/redis_asio_adapter.hpp"

#include <memory>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace fg::worker {

namespace {

namespace asio = boost::asio;

class asio_adapter : public std::enable_shared_from_this<asio_adapter> {
 public:
  asio_adapter(asio::io_context& io, redisAsyncContext* ac, redis_io_stats& stats)
      : ac_(ac), stats_(stats), socket_(io, ac->c.fd) {}

  // Pending waits hold a shared_ptr; this one is hiredis's, dropped in cleanup.
  std::shared_ptr<asio_adapter> self;

  void add_read() {
    want_read_ = true;
    arm(read_pending_, asio::posix::descriptor_base::wait_read);
  }
  void del_read() { want_read_ = false; }
  void add_write() {
    want_write_ = true;
    arm(write_pending_, asio::posix::descriptor_base::wait_write);
  }
  void del_write() { want_write_ = false; }
  void set_sink(redis_reply_sink sink) { sink_ = std::move(sink); }

  void cleanup() {
    ac_ = nullptr;
    want_read_ = want_write_ = false;
    // hiredis closes the fd right after this hook: give it back, untouched.
    // release() also completes the pending waits with operation_aborted.
    (void)socket_.release();
    auto last = std::move(self);  // may destroy *this on return when no wait is pending
  }

 private:
  // A wait left pending after del_* completes once and is then ignored
  // (there is no per-direction cancel on a descriptor).
  void arm(bool& pending, asio::posix::descriptor_base::wait_type type) {
    if (pending || ac_ == nullptr) return;
    pending = true;
    socket_.async_wait(
        type, [keep = shared_from_this(), type](const boost::system::error_code& ec) { keep->on_ready(type, ec); });
  }

  void on_ready(asio::posix::descriptor_base::wait_type type, const boost::system::error_code& ec) {
    const bool read = type == asio::posix::descriptor_base::wait_read;
    (read ? read_pending_ : write_pending_) = false;
    if (ec || ac_ == nullptr) return;
    // Either call may free the context (cleanup runs, ac_ becomes null).
    if (read && want_read_) {
      ++stats_.read_events;
      if (sink_)
        read_to_sink();
      else
        redisAsyncHandleRead(ac_);
    } else if (!read && want_write_) {
      ++stats_.write_events;
      redisAsyncHandleWrite(ac_);
    }
    if (ac_ == nullptr) return;
    if (read && want_read_) arm(read_pending_, type);
    if (!read && want_write_) arm(write_pending_, type);
  }

  // What redisAsyncHandleRead does, with the replies going to the sink.
  void read_to_sink() {
    // On an error hiredis's own read path meets it again and disconnects.
    if (redisBufferRead(&ac_->c) != REDIS_OK) return redisAsyncHandleRead(ac_);
    const auto keep = shared_from_this();  // the sink may free the context
    while (ac_ != nullptr) {
      void* reply = nullptr;
      if (redisGetReply(&ac_->c, &reply) != REDIS_OK) return redisAsyncDisconnect(ac_);
      if (reply == nullptr) return;
      const std::unique_ptr<redisReply, void (*)(void*)> owned(static_cast<redisReply*>(reply), freeReplyObject);
      sink_(*owned);
    }
  }

  redisAsyncContext* ac_;
  redis_io_stats& stats_;
  redis_reply_sink sink_;
  asio::posix::stream_descriptor socket_;
  bool want_read_ = false, want_write_ = false;
  bool read_pending_ = false, write_pending_ = false;
};

asio_adapter& of(void* privdata) { return *static_cast<asio_adapter*>(privdata); }

}  // namespace

void set_redis_reply_sink(redisAsyncContext* ac, redis_reply_sink sink) { of(ac->ev.data).set_sink(std::move(sink)); }

bool send_raw_command(redisAsyncContext* ac, int argc, const char** argv, const std::size_t* argvlen) {
  if (redisAppendCommandArgv(&ac->c, argc, argv, argvlen) != REDIS_OK) return false;
  ac->ev.addWrite(ac->ev.data);
  return true;
}

bool attach_redis_to_asio(asio::io_context& io, redisAsyncContext* ac, redis_io_stats& stats) {
  if (ac == nullptr || ac->ev.data != nullptr || ac->c.fd < 0) return false;
  auto adapter = std::make_shared<asio_adapter>(io, ac, stats);
  adapter->self = adapter;
  ac->ev.data = adapter.get();
  ac->ev.addRead = [](void* p) { of(p).add_read(); };
  ac->ev.delRead = [](void* p) { of(p).del_read(); };
  ac->ev.addWrite = [](void* p) { of(p).add_write(); };
  ac->ev.delWrite = [](void* p) { of(p).del_write(); };
  ac->ev.cleanup = [](void* p) { of(p).cleanup(); };
  return true;
}

}  // namespace fg::worker
