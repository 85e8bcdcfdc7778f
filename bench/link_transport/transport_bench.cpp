// The moonshot, measured before anyone builds it: the gateway-worker
// link as it is, a Unix stream socket (a copy into the kernel and one out,
// a send and a receive per batch, a wake-up whenever the peer sleeps),
// against a shared-memory ring per direction (memfd; an eventfd doorbell
// rung only when the reader sleeps; the reader parses in place).
//
// Two processes play gateway and worker: the "gateway" keeps --window
// messages of --size bytes in flight, the "worker" answers each with a copy,
// a batch per read as the real ones do. Both transports run alternately in
// one run, --rounds times each; the medians and their ratio are printed.
// Payloads are checked: a lost, reordered or damaged message fails the run.
//
//   build/bin/framegate-link-transport-bench --size 1024 --window 1600 --seconds 3
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

[[noreturn]] void fail_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

// A message on either transport: u32 payload length, u64 sequence, payload.
// Length 0 ends the run.
constexpr std::size_t header_bytes = 12;

void put_header(std::uint8_t* at, std::uint32_t len, std::uint64_t seq) {
  std::memcpy(at, &len, 4);
  std::memcpy(at + 4, &seq, 8);
}

// ------------------------------------------------------------------ transports

// One direction's reader and the other's writer, for one process.
class endpoint {
 public:
  virtual ~endpoint() = default;
  // Appends one message to the batch being built.
  virtual void queue(std::uint64_t seq, const std::uint8_t* payload, std::uint32_t len) = 0;
  // Sends the batch.
  virtual void flush() = 0;
  // Calls fn(seq, payload, len) for every whole message available, waiting
  // (asleep) until there is at least one. Returns false on end of run.
  template <class Fn>
  bool take(Fn&& fn);

 protected:
  // The bytes available to parse, waiting for some; empty span at EOF.
  virtual std::pair<const std::uint8_t*, std::size_t> readable() = 0;
  // `n` bytes of what readable() gave were parsed.
  virtual void consumed(std::size_t n) = 0;
};

template <class Fn>
bool endpoint::take(Fn&& fn) {
  auto [data, size] = readable();
  if (size == 0) return false;
  std::size_t at = 0;
  bool more = true;
  while (size - at >= header_bytes) {
    std::uint32_t len;
    std::uint64_t seq;
    std::memcpy(&len, data + at, 4);
    std::memcpy(&seq, data + at + 4, 8);
    if (len == 0) {
      at += header_bytes;
      more = false;
      break;
    }
    if (size - at < header_bytes + len) break;
    fn(seq, data + at + header_bytes, len);
    at += header_bytes + len;
  }
  consumed(at);
  return more;
}

// The link as it is: a Unix stream socket, a batch per send, a read buffer
// as large as the worker's (256 KiB).
class socket_endpoint final : public endpoint {
 public:
  explicit socket_endpoint(int fd) : fd_(fd), in_(256 * 1024) {}
  ~socket_endpoint() override { ::close(fd_); }

  void queue(std::uint64_t seq, const std::uint8_t* payload, std::uint32_t len) override {
    const std::size_t at = out_.size();
    out_.resize(at + header_bytes + len);
    put_header(out_.data() + at, len, seq);
    std::memcpy(out_.data() + at + header_bytes, payload, len);
  }
  void flush() override {
    std::size_t done = 0;
    while (done < out_.size()) {
      const ssize_t n = ::send(fd_, out_.data() + done, out_.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno != EINTR) fail_errno("send");
      if (n > 0) done += static_cast<std::size_t>(n);
    }
    out_.clear();
  }

 protected:
  std::pair<const std::uint8_t*, std::size_t> readable() override {
    for (;;) {
      const ssize_t n = ::recv(fd_, in_.data() + have_, in_.size() - have_, 0);  // asleep until bytes come
      if (n > 0) {
        have_ += static_cast<std::size_t>(n);
        return {in_.data(), have_};
      }
      if (n == 0) return {nullptr, 0};
      if (errno != EINTR) fail_errno("recv");
    }
  }
  void consumed(std::size_t n) override {
    std::memmove(in_.data(), in_.data() + n, have_ - n);  // a partial message's head, at most
    have_ -= n;
  }

 private:
  int fd_;
  std::vector<std::uint8_t> in_;
  std::size_t have_ = 0;
  std::vector<std::uint8_t> out_;
};

// One direction of the ring: shared between the two processes.
struct ring_control {
  alignas(64) std::atomic<std::uint64_t> tail{0};  // written by the producer
  alignas(64) std::atomic<std::uint64_t> head{0};  // written by the consumer
  alignas(64) std::atomic<std::uint32_t> reader_asleep{0};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
              "atomics in shared memory must be lock-free");

// The data region is mapped twice, back to back, so a message that wraps
// is still contiguous: the reader parses every message in place.
struct ring_mapping {
  ring_control* control = nullptr;
  std::uint8_t* data = nullptr;
  std::size_t capacity = 0;
  int doorbell = -1;  // eventfd: "there is data" for a sleeping reader
};

ring_mapping make_ring(std::size_t capacity) {
  const int fd = ::memfd_create("framegate-link-ring", MFD_CLOEXEC);
  if (fd < 0) fail_errno("memfd_create");
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (::ftruncate(fd, static_cast<off_t>(page + capacity)) != 0) fail_errno("ftruncate");
  ring_mapping r;
  r.capacity = capacity;
  void* control = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (control == MAP_FAILED) fail_errno("mmap control");
  r.control = new (control) ring_control();
  // Reserve twice the data size, then map the same pages into both halves.
  void* area = ::mmap(nullptr, 2 * capacity, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) fail_errno("mmap reserve");
  auto* base = static_cast<std::uint8_t*>(area);
  for (int half = 0; half < 2; ++half)
    if (::mmap(base + half * capacity, capacity, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
               static_cast<off_t>(page)) == MAP_FAILED)
      fail_errno("mmap data");
  ::close(fd);
  r.data = base;
  r.doorbell = ::eventfd(0, EFD_CLOEXEC);
  if (r.doorbell < 0) fail_errno("eventfd");
  return r;
}

class ring_endpoint final : public endpoint {
 public:
  // `spin`: how long a reader that finds the ring empty looks again before
  // it sleeps (zero: at once). Spinning saves the doorbell when the peer
  // answers quickly, and takes the core from everyone else meanwhile.
  ring_endpoint(ring_mapping in, ring_mapping out, std::chrono::microseconds spin) : in_(in), out_(out), spin_(spin) {}

  void queue(std::uint64_t seq, const std::uint8_t* payload, std::uint32_t len) override {
    const std::size_t need = header_bytes + len;
    // The window keeps far less than the ring in flight; a full ring would
    // be a bug of this benchmark, not something to wait out.
    if (pending_ + need - out_.control->head.load(std::memory_order_acquire) > out_.capacity)
      throw std::runtime_error("ring full: raise the ring size or lower --window");
    std::uint8_t* at = out_.data + (pending_ % out_.capacity);
    put_header(at, len, seq);
    std::memcpy(at + header_bytes, payload, len);
    pending_ += need;
  }
  void flush() override {
    out_.control->tail.store(pending_, std::memory_order_release);
    // Pairs with the reader's fence between "asleep" and its last look at
    // tail: either it sees the new tail, or this sees it asleep.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (out_.control->reader_asleep.load(std::memory_order_relaxed) != 0) {
      const std::uint64_t one = 1;
      if (::write(out_.doorbell, &one, sizeof one) != sizeof one) fail_errno("eventfd write");
    }
  }

 protected:
  std::pair<const std::uint8_t*, std::size_t> readable() override {
    for (;;) {
      const std::uint64_t tail = in_.control->tail.load(std::memory_order_acquire);
      if (tail != read_) return {in_.data + (read_ % in_.capacity), static_cast<std::size_t>(tail - read_)};
      if (spin_.count() > 0 && spun()) continue;
      in_.control->reader_asleep.store(1, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (in_.control->tail.load(std::memory_order_acquire) == read_) {
        std::uint64_t rung;
        if (::read(in_.doorbell, &rung, sizeof rung) < 0 && errno != EINTR) fail_errno("eventfd read");
      }
      in_.control->reader_asleep.store(0, std::memory_order_relaxed);
    }
  }
  void consumed(std::size_t n) override {
    read_ += n;
    in_.control->head.store(read_, std::memory_order_release);
  }

 private:
  // True when data came within the spin time.
  bool spun() const {
    const auto until = std::chrono::steady_clock::now() + spin_;
    do {
      for (int i = 0; i < 64; ++i)
        if (in_.control->tail.load(std::memory_order_acquire) != read_) return true;
    } while (std::chrono::steady_clock::now() < until);
    return false;
  }

  ring_mapping in_;
  ring_mapping out_;
  std::chrono::microseconds spin_;
  std::uint64_t pending_ = 0;  // bytes queued into out_, published or not
  std::uint64_t read_ = 0;     // bytes of in_ parsed
};

// ------------------------------------------------------------------ the loop

struct options {
  std::uint32_t size = 1024;
  std::uint32_t window = 1600;
  double seconds = 3;
  int rounds = 3;
  std::uint32_t spin_us = 0;
  std::string json;
};

std::uint8_t fill_of(std::uint64_t seq) { return static_cast<std::uint8_t>('a' + seq % 26); }

// The "worker": answers every message with a copy, one batch per read.
void worker_loop(endpoint& e) {
  while (e.take([&](std::uint64_t seq, const std::uint8_t* payload, std::uint32_t len) { e.queue(seq, payload, len); }))
    e.flush();
}

struct round_result {
  double seconds = 0;
  std::uint64_t round_trips = 0;
  double cpu_seconds = 0;  // both processes
};

double cpu_of(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The "gateway": keeps the window full until the time is up, checks every
// reply, then ends the run.
round_result gateway_loop(endpoint& e, const options& o) {
  std::vector<std::uint8_t> payload(o.size);
  std::uint64_t next = 0, expected = 0;
  const auto send_one = [&] {
    std::fill(payload.begin(), payload.end(), fill_of(next));
    e.queue(next++, payload.data(), o.size);
  };
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(o.seconds);
  for (std::uint32_t i = 0; i < o.window; ++i) send_one();
  e.flush();
  bool sending = true;
  while (expected < next) {
    e.take([&](std::uint64_t seq, const std::uint8_t* p, std::uint32_t len) {
      if (seq != expected || len != o.size || p[0] != fill_of(seq) || p[len - 1] != fill_of(seq))
        throw std::runtime_error("reply " + std::to_string(seq) + " is not message " + std::to_string(expected));
      ++expected;
      if (sending) send_one();
    });
    if (sending && std::chrono::steady_clock::now() >= deadline) sending = false;
    e.flush();
  }
  round_result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.round_trips = expected;
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  r.cpu_seconds = cpu_of(after) - cpu_of(before);
  return r;
}

void end_run(endpoint& e) {
  std::uint8_t none = 0;
  e.queue(0, &none, 0);
  e.flush();
}

// Forks the worker, runs the gateway, adds the worker's CPU (from wait4).
template <class MakeGateway, class MakeWorker>
round_result run_round(const options& o, MakeGateway make_gateway, MakeWorker make_worker) {
  const pid_t child = ::fork();
  if (child < 0) fail_errno("fork");
  if (child == 0) {
    // A gateway that fails leaves the worker asleep on its doorbell: it
    // must not outlive the run.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() == 1) ::_exit(1);
    int rc = 0;
    try {
      auto w = make_worker();
      worker_loop(*w);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "worker: %s\n", ex.what());
      rc = 1;
    }
    std::fflush(stderr);
    ::_exit(rc);
  }
  round_result r;
  try {
    auto g = make_gateway();
    r = gateway_loop(*g, o);
    end_run(*g);
  } catch (...) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    throw;
  }
  int status = 0;
  rusage child_usage{};
  if (::wait4(child, &status, 0, &child_usage) != child) fail_errno("wait4");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("the worker process failed");
  r.cpu_seconds += cpu_of(child_usage);
  return r;
}

round_result socket_round(const options& o) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) fail_errno("socketpair");
  // Both sides block in send: the whole window must fit in the socket, or
  // each would wait for the other to read. (The real links do not block;
  // the gateway's credit window bounds what is in flight.)
  const int room = static_cast<int>(std::min<std::size_t>(2ull * o.window * (header_bytes + o.size), 1u << 30));
  for (int fd : fds)
    if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &room, sizeof room) != 0 &&
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &room, sizeof room) != 0)
      fail_errno("setsockopt SO_SNDBUF");
  return run_round(
      o,
      [&] {
        ::close(fds[1]);
        return std::make_unique<socket_endpoint>(fds[0]);
      },
      [&] {
        ::close(fds[0]);
        return std::make_unique<socket_endpoint>(fds[1]);
      });
}

round_result ring_round(const options& o) {
  // Room for the window both ways with margin; a power of two of pages.
  std::size_t capacity = 1 << 20;
  while (capacity < 4ull * o.window * (header_bytes + o.size)) capacity <<= 1;
  const ring_mapping to_worker = make_ring(capacity);
  const ring_mapping to_gateway = make_ring(capacity);
  return run_round(
      o, [&] { return std::make_unique<ring_endpoint>(to_gateway, to_worker, std::chrono::microseconds(o.spin_us)); },
      [&] { return std::make_unique<ring_endpoint>(to_worker, to_gateway, std::chrono::microseconds(o.spin_us)); });
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"framegate-link-transport-bench: the gateway-worker link over a Unix socket vs a shared-memory ring"};
  app.add_option("--size", o.size, "payload bytes per message")->check(CLI::Range(1u, 1u << 20));
  app.add_option("--window", o.window, "messages in flight (the closed loop's)")->check(CLI::Range(1u, 100000u));
  app.add_option("--seconds", o.seconds, "length of each round")->check(CLI::Range(0.05, 600.0));
  app.add_option("--rounds", o.rounds, "rounds per transport, alternating")->check(CLI::Range(1, 50));
  app.add_option("--spin-us", o.spin_us, "ring readers look again this long before sleeping")
      ->check(CLI::Range(0u, 10000u));
  app.add_option("--json", o.json, "also write the results to this file");
  CLI11_PARSE(app, argc, argv);

  try {
    std::vector<double> rate[2], cpu[2];
    const char* names[2] = {"unix-socket", "shm-ring"};
    for (int round = 0; round < o.rounds; ++round) {
      for (int t = 0; t < 2; ++t) {
        const round_result r = t == 0 ? socket_round(o) : ring_round(o);
        rate[t].push_back(static_cast<double>(r.round_trips) / r.seconds);
        cpu[t].push_back(r.cpu_seconds * 1e6 / static_cast<double>(r.round_trips));
        std::printf("round %d  %-11s  %10.0f round trips/s  %6.3f us CPU per round trip (both processes)\n", round + 1,
                    names[t], rate[t].back(), cpu[t].back());
      }
    }
    nlohmann::json out = {
        {"size", o.size}, {"window", o.window}, {"seconds", o.seconds}, {"rounds", o.rounds}, {"spin_us", o.spin_us}};
    for (int t = 0; t < 2; ++t)
      out[names[t]] = {{"round_trips_per_s", rate[t]},
                       {"cpu_us_per_round_trip", cpu[t]},
                       {"median_round_trips_per_s", median(rate[t])},
                       {"median_cpu_us_per_round_trip", median(cpu[t])}};
    out["ring/socket throughput"] = median(rate[1]) / median(rate[0]);
    out["ring/socket CPU per round trip"] = median(cpu[1]) / median(cpu[0]);
    std::printf("median  ring/socket: throughput %.2fx, CPU per round trip %.2fx\n",
                out["ring/socket throughput"].get<double>(), out["ring/socket CPU per round trip"].get<double>());
    if (!o.json.empty()) std::ofstream(o.json) << out.dump(2) << '\n';
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "framegate-link-transport-bench: %s\n", ex.what());
    return 1;
  }
  return 0;
}
