#include "common/intrusive_ref.hpp"

#include <gtest/gtest.h>

#include <utility>

namespace {

using fg::intrusive_ref;

// Counts its own destruction, so a test sees exactly when it is deleted.
struct tracked : fg::ref_counted<tracked> {
  explicit tracked(int& deleted) : deleted_(deleted) {}
  ~tracked() { ++deleted_; }
  int& deleted_;
};

TEST(IntrusiveRef, TheLastHandleDeletesTheObjectOnce) {
  int deleted = 0;
  {
    intrusive_ref<tracked> a(new tracked(deleted));
    EXPECT_EQ(a->ref_count(), 1u);
    {
      intrusive_ref<tracked> b = a;
      EXPECT_EQ(a->ref_count(), 2u);
    }
    EXPECT_EQ(a->ref_count(), 1u);
    EXPECT_EQ(deleted, 0);
  }
  EXPECT_EQ(deleted, 1);
}

TEST(IntrusiveRef, MoveTransfersOwnershipWithoutCounting) {
  int deleted = 0;
  intrusive_ref<tracked> a(new tracked(deleted));
  intrusive_ref<tracked> b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): a moved-from handle is empty
  EXPECT_EQ(b->ref_count(), 1u);
  intrusive_ref<tracked> c;
  c = std::move(b);
  EXPECT_EQ(c->ref_count(), 1u);
  c.reset();
  EXPECT_FALSE(c);
  EXPECT_EQ(deleted, 1);
}

TEST(IntrusiveRef, AssignmentReleasesTheOldObjectAndSurvivesSelfAssignment) {
  int first = 0;
  int second = 0;
  intrusive_ref<tracked> a(new tracked(first));
  intrusive_ref<tracked> b(new tracked(second));
  a = b;
  EXPECT_EQ(first, 1);
  EXPECT_EQ(b->ref_count(), 2u);
  auto& same = a;
  a = same;
  EXPECT_EQ(a->ref_count(), 2u);
  EXPECT_EQ(second, 0);
}

TEST(IntrusiveRef, AnObjectMayDropItsLastHandleFromInsideItself) {
  // `const auto keep = std::move(self_);` in a member function keeps the
  // object alive until the function returns.
  struct self_owning : fg::ref_counted<self_owning> {
    explicit self_owning(int& deleted) : deleted_(deleted) {}
    ~self_owning() { ++deleted_; }
    void let_go() {
      const auto keep = std::move(self_);
      EXPECT_EQ(deleted_, 0);  // still alive here
    }
    int& deleted_;
    intrusive_ref<self_owning> self_;
  };
  int deleted = 0;
  auto* p = new self_owning(deleted);
  p->self_ = intrusive_ref<self_owning>(p);
  p->let_go();
  EXPECT_EQ(deleted, 1);
}

TEST(IntrusiveRef, IsOnePointer) { static_assert(sizeof(intrusive_ref<tracked>) == sizeof(void*)); }

}  // namespace
