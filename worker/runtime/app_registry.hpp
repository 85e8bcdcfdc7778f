// Apps mounted by URL path. The runtime routes each ConnectionOpened to the
// app at its exact path ("/rooms"; the query string is not part of it) and
// tells the gateway which paths this worker serves (Register.paths).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "worker/app.hpp"

namespace fg::worker {

class app_registry {
 public:
  // Throws std::invalid_argument on a path that does not start with '/'
  // or is mounted already (a start-up error, never a data-path one).
  void mount(std::string path, std::unique_ptr<app> a) {
    if (path.empty() || path.front() != '/') throw std::invalid_argument("app path must start with '/': " + path);
    if (find(path) != nullptr) throw std::invalid_argument("two apps mounted at " + path);
    if (!a) throw std::invalid_argument("no app given for " + path);
    mounts_.push_back({std::move(path), std::move(a)});
  }

  // The app at `path`, or nullptr. A linear scan: a worker mounts a handful.
  [[nodiscard]] app* find(std::string_view path) const noexcept {
    for (const auto& m : mounts_)
      if (m.path == path) return m.handler.get();
    return nullptr;
  }

  [[nodiscard]] std::vector<std::string> paths() const {
    std::vector<std::string> out;
    out.reserve(mounts_.size());
    for (const auto& m : mounts_) out.push_back(m.path);
    return out;
  }

  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& m : mounts_) fn(m.path, *m.handler);
  }

  [[nodiscard]] std::size_t size() const noexcept { return mounts_.size(); }

 private:
  struct mount_point {
    std::string path;
    std::unique_ptr<app> handler;
  };
  std::vector<mount_point> mounts_;
};

}  // namespace fg::worker
