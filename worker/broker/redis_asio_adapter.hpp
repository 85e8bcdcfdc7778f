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
#pragma once

#include <cstdint>

#include <boost/asio/io_context.hpp>

struct redisAsyncContext;

namespace fg::worker {

// Counts kept by the caller (they outlive any one connection).
struct redis_io_stats {
  std::uint64_t read_events = 0;   // redisAsyncHandleRead calls
  std::uint64_t write_events = 0;  // redisAsyncHandleWrite calls: one flush each
};

// Installs the hooks on `ac` (which must have none yet). Returns false when
// the context has no usable fd. `stats` must outlive the context.
bool attach_redis_to_asio(boost::asio::io_context& io, redisAsyncContext* ac, redis_io_stats& stats);

}  // namespace fg::worker
