// Room inside an object for one pending asynchronous operation.
//
// Asio allocates the operation of each async call (the handler plus about
// 64 bytes of bookkeeping) on the heap, through a per-thread cache that
// keeps the last block freed whatever its size: an idle connection's read
// wait ended up holding the 272-byte block its handshake read had left
// there. A handler whose associated allocator is an op_slot::allocator puts
// its operation in the slot instead, so an idle connection's pending wait
// costs the slot's bytes inside the connection and no heap block.
//
// One operation at a time: Asio frees an operation before it calls the
// handler, so the handler may start the next one in the same slot. An
// allocation while the slot is taken, or too large for it, goes to the heap.
//
// Like the object it lives in, a slot belongs to one thread.
#pragma once

#include <cstddef>
#include <new>

namespace fg::gateway {

template <std::size_t Bytes>
class op_slot {
 public:
  op_slot() = default;
  op_slot(const op_slot&) = delete;
  op_slot& operator=(const op_slot&) = delete;

  [[nodiscard]] bool busy() const noexcept { return busy_; }

  void* allocate(std::size_t size) {
    if (busy_ || size > Bytes) return ::operator new(size);
    busy_ = true;
    return bytes_;
  }
  void deallocate(void* p) noexcept {
    if (p == static_cast<void*>(bytes_)) {
      busy_ = false;
      return;
    }
    ::operator delete(p);
  }

  // What a handler names as its allocator_type (Asio rebinds it to the
  // operation's type).
  template <class T>
  class allocator {
   public:
    using value_type = T;
    template <class U>
    struct rebind {
      using other = allocator<U>;
    };

    explicit allocator(op_slot& slot) noexcept : slot_(&slot) {}
    template <class U>
    allocator(const allocator<U>& o) noexcept : slot_(o.slot_) {}  // NOLINT: rebinding converts implicitly

    T* allocate(std::size_t n) {
      static_assert(alignof(T) <= alignof(void*), "the slot is aligned for pointers only");
      return static_cast<T*>(slot_->allocate(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t) noexcept { slot_->deallocate(p); }

    friend bool operator==(const allocator& a, const allocator& b) noexcept { return a.slot_ == b.slot_; }

   private:
    template <class U>
    friend class allocator;
    op_slot* slot_;
  };

 private:
  alignas(void*) unsigned char bytes_[Bytes];
  bool busy_ = false;
};

}  // namespace fg::gateway
