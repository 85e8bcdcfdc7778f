// Runs a hiredis async context on a boost::asio io_context, like hiredis's
// own adapters/ae.h does for the Redis event loop: its five hooks become
// async_wait calls on a posix descriptor that watches hiredis's socket
// without owning it. No thread of its own; everything runs on the loop.
//
// Ownership: attach() hands the adapter to hiredis (ev.data). hiredis calls
// cleanup when it frees the context; the adapter then releases the
// descriptor (cancelling its waits, leaving the fd to hiredis, which closes
// it) and dies when the last pending wait has completed.
//
// Batching: addWrite only arms a wait, so every command issued during one
// loop turn is written by one redisAsyncHandleWrite, once the loop polls.
//
// Reply sink: a context may take its replies itself instead of through
// hiredis's callback queue, for replies that queue does not know: hiredis
// (0.14 and 1.x) pairs SUBSCRIBE's acknowledgements and pushes with
// callbacks, but not SSUBSCRIBE's (sharded pub/sub), which it would drop,
// misroute or assert on. Commands on such a context go with
// send_raw_command, which queues no callback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include <boost/asio/io_context.hpp>

struct redisAsyncContext;
struct redisReply;

namespace fg::worker {

// Counts kept by the caller (they outlive any one connection).
struct redis_io_stats {
  std::uint64_t read_events = 0;   // redisAsyncHandleRead calls
  std::uint64_t write_events = 0;  // redisAsyncHandleWrite calls: one flush each
};

// Installs the hooks on `ac` (which must have none yet). Returns false when
// the context has no usable fd. `stats` must outlive the context.
bool attach_redis_to_asio(boost::asio::io_context& io, redisAsyncContext* ac, redis_io_stats& stats);

// From now on every reply read on `ac` (attached above) goes to `sink`,
// which may close or free the context. A protocol error or a lost
// connection still ends in hiredis's disconnect callback.
using redis_reply_sink = std::function<void(const redisReply&)>;
void set_redis_reply_sink(redisAsyncContext* ac, redis_reply_sink sink);

// Appends a command to `ac`'s output and asks for a write; no callback is
// queued (the reply reaches the sink). False when hiredis refused it.
bool send_raw_command(redisAsyncContext* ac, int argc, const char** argv, const std::size_t* argvlen);

}  // namespace fg::worker
