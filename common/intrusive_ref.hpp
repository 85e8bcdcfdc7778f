// An owning handle to an object that counts its own owners.
//
// Why not std::shared_ptr: a gateway holds one object per client connection,
// tens of thousands of them idle, and every byte of each counts.
// enable_shared_from_this costs a weak pointer (16 bytes) in the object, a
// control block (16) beside it, and 16 bytes in every handler that keeps it
// alive; here the count is 4 bytes inside the object and a handle is one
// pointer.
//
// Not thread-safe: the count is a plain integer. Use it for objects that
// live on one thread at a time (a session lives on its I/O thread).
#pragma once

#include <cstdint>
#include <utility>

namespace fg {

// Base of a counted object: `Derived` is deleted when its last
// intrusive_ref goes. Create it with `new` and hand it to an intrusive_ref
// at once.
template <class Derived>
class ref_counted {
 public:
  ref_counted(const ref_counted&) = delete;
  ref_counted& operator=(const ref_counted&) = delete;

  [[nodiscard]] std::uint32_t ref_count() const noexcept { return refs_; }

 protected:
  ref_counted() = default;
  ~ref_counted() = default;

 private:
  template <class T>
  friend class intrusive_ref;

  void add_ref() noexcept { ++refs_; }
  void drop_ref() noexcept {
    if (--refs_ == 0) delete static_cast<Derived*>(this);
  }

  std::uint32_t refs_ = 0;
};

template <class T>
class intrusive_ref {
 public:
  intrusive_ref() noexcept = default;
  // Adopts `p` as one more owner (p may be new, with a count of 0).
  explicit intrusive_ref(T* p) noexcept : p_(p) {
    if (p_ != nullptr) p_->add_ref();
  }
  intrusive_ref(const intrusive_ref& o) noexcept : intrusive_ref(o.p_) {}
  intrusive_ref(intrusive_ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  // By value: copy and move assignment in one, safe against self-assignment.
  intrusive_ref& operator=(intrusive_ref o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~intrusive_ref() { reset(); }

  void reset() noexcept {
    if (T* p = std::exchange(p_, nullptr)) p->drop_ref();
  }

  [[nodiscard]] T* get() const noexcept { return p_; }
  T* operator->() const noexcept { return p_; }
  T& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  T* p_ = nullptr;
};

}  // namespace fg
