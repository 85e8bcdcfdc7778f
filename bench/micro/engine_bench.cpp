// Parse + unmask + UTF-8 validate throughput of the frame engine, next to
// memcpy of the same bytes (the physical limit of touching them once), and
// the cost of permessage-deflate per message (what --deflate-threshold,
// --deflate-level and --deflate-mem-level trade), and the copy the gateway
// keeps of every message a worker has not acknowledged.
//
//   build/bin/framegate-micro-bench --benchmark_counters_tabular=true
#include <cstring>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "common/buffer_pool.hpp"
#include "common/deflate/deflater.hpp"
#include "common/link/message_encoder.hpp"
#include "common/link/write_batch.hpp"
#include "common/utf8.hpp"
#include "gateway/routing/unacked_ledger.hpp"
#include "gateway/ws/inflater.hpp"
#include "gateway/ws/message_reader.hpp"

namespace {

using namespace fg;

// `count` masked text frames of `payload` ASCII bytes each, back to back.
std::vector<std::uint8_t> make_frames(std::size_t payload, std::size_t count) {
  std::mt19937 rng(42);
  std::vector<std::uint8_t> out;
  for (std::size_t f = 0; f < count; ++f) {
    out.push_back(0x81);
    if (payload < 126) {
      out.push_back(static_cast<std::uint8_t>(0x80 | payload));
    } else if (payload <= 0xFFFF) {
      out.push_back(0x80 | 126);
      out.push_back(static_cast<std::uint8_t>(payload >> 8));
      out.push_back(static_cast<std::uint8_t>(payload));
    } else {
      out.push_back(0x80 | 127);
      for (int i = 7; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(payload >> (8 * i)));
    }
    std::uint8_t mask[4];
    for (auto& m : mask) m = static_cast<std::uint8_t>(rng());
    out.insert(out.end(), mask, mask + 4);
    for (std::size_t i = 0; i < payload; ++i) out.push_back(static_cast<std::uint8_t>(('a' + i % 26) ^ mask[i % 4]));
  }
  return out;
}

struct counting_handler {
  std::size_t messages = 0;
  std::size_t bytes = 0;
  void on_message(ws::opcode, std::span<std::uint8_t> p) {
    ++messages;
    bytes += p.size();
  }
  void on_ping(std::span<std::uint8_t>) {}
  void on_pong(std::span<std::uint8_t>) {}
  void on_close(std::uint16_t, std::string_view) {}
};

// About 256 KiB of frames per iteration, so small frames are measured in bulk.
std::size_t frames_for(std::size_t payload) { return std::max<std::size_t>(1, (256 * 1024) / (payload + 14)); }

void bm_parse_unmask_validate(benchmark::State& state) {
  const auto payload = static_cast<std::size_t>(state.range(0));
  const auto pristine = make_frames(payload, frames_for(payload));
  std::vector<std::uint8_t> work(pristine.size());
  ws::reader_options opt;
  opt.limits.max_message_size = 1 << 20;
  counting_handler h;
  buffer_pool buffers;
  ws::inflater_pool inflaters;
  for (auto _ : state) {
    state.PauseTiming();  // unmasking is in place: restore the masked bytes
    std::memcpy(work.data(), pristine.data(), pristine.size());
    state.ResumeTiming();
    ws::message_reader reader;
    if (reader.feed(work, opt, {buffers, inflaters}, h) != ws::error::none) state.SkipWithError("parse error");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * pristine.size()));
  state.counters["msgs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * frames_for(payload)), benchmark::Counter::kIsRate);
}

void bm_memcpy(benchmark::State& state) {
  const auto payload = static_cast<std::size_t>(state.range(0));
  const auto src = make_frames(payload, frames_for(payload));
  std::vector<std::uint8_t> dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * src.size()));
}

void bm_utf8_ascii(benchmark::State& state) {
  std::vector<std::uint8_t> text(static_cast<std::size_t>(state.range(0)), 'x');
  for (auto _ : state) {
    utf8_validator v;
    benchmark::DoNotOptimize(v.feed(text));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

// JSON of the shape a chat or dashboard sends: similar keys, varying values.
std::vector<std::uint8_t> json_message(std::size_t size) {
  std::string s = "[";
  for (int i = 0; s.size() < size; ++i)
    s += R"({"id":)" + std::to_string(1000 + i * 7) + R"(,"user":"user)" + std::to_string(i % 13) +
         R"(","text":"message number )" + std::to_string(i) + R"(","ts":)" + std::to_string(1700000000 + i * 31) + "},";
  s.resize(size);
  return {s.begin(), s.end()};
}

// One message compressed without context takeover (a fresh deflate
// stream per message, as every send and broadcast of the gateway by
// default). Arguments: size, level, memLevel.
void bm_deflate_message(benchmark::State& state) {
  const auto message = json_message(static_cast<std::size_t>(state.range(0)));
  deflater d(15, {static_cast<int>(state.range(1)), static_cast<int>(state.range(2))}, false);
  byte_buffer out;
  for (auto _ : state) {
    out.clear();
    d.compress(message, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * message.size()));
  state.counters["ratio"] = static_cast<double>(message.size()) / static_cast<double>(out.size());
  state.counters["msgs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// One compressed message inflated with a pooled inflater, reset after it.
void bm_inflate_message(benchmark::State& state) {
  const auto message = json_message(static_cast<std::size_t>(state.range(0)));
  deflater d(15, {}, false);
  byte_buffer compressed;
  d.compress(message, compressed);
  ws::inflater i;
  byte_buffer out;
  for (auto _ : state) {
    out.clear();
    if (i.inflate(compressed.span(), out, 1 << 30) != ws::error::none ||
        i.finish_message(out, 1 << 30) != ws::error::none)
      state.SkipWithError("inflate error");
    i.reset();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * message.size()));
  state.counters["msgs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// Forwarding's bookkeeping in a closed loop's steady state: each message
// encoded into the link's batch (a write every 16) and recorded, with
// 1,600 outstanding: one acknowledged per message.
void bm_ledger_steady(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const std::vector<std::uint8_t> payload(size, 'x');
  link::write_batch batch;
  gateway::unacked_ledger ledger;
  const auto forward = [&] {
    const std::size_t at = link::encode_message(batch.next_envelope(), 1, true, payload, ledger.next_seq());
    const std::uint64_t seq = ledger.record(1, true, size, gateway::stored_payload{batch.queued_block(), at});
    if (seq % 16 == 0) {
      benchmark::DoNotOptimize(batch.begin_write().data());
      batch.complete_write();
    }
    return seq;
  };
  for (int i = 0; i < 1600; ++i) forward();
  for (auto _ : state) ledger.acknowledge(forward() - 1600);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

}  // namespace

BENCHMARK(bm_ledger_steady)->Arg(64)->Arg(1024)->Arg(16384);
BENCHMARK(bm_deflate_message)
    ->ArgsProduct({{64, 256, 1024, 4096, 65536}, {1, 6}, {8}})
    ->ArgsProduct({{256, 1024, 4096, 65536}, {1, 6}, {1, 4, 9}});
BENCHMARK(bm_inflate_message)->Arg(256)->Arg(1024)->Arg(4096)->Arg(65536);
BENCHMARK(bm_parse_unmask_validate)->Arg(16)->Arg(256)->Arg(4096)->Arg(65536);
BENCHMARK(bm_memcpy)->Arg(16)->Arg(256)->Arg(4096)->Arg(65536);
BENCHMARK(bm_utf8_ascii)->Arg(256)->Arg(65536);
BENCHMARK_MAIN();
