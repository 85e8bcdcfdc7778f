// The JSON error path builds no document: a hostile text (1 MiB of '[')
// gets its reason at the cost of a few small allocations, not of one node
// per bracket. Its own executable because it replaces the global operator
// new to count what the code under test allocates.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <string>

#include "common/json/json_text.hpp"
#include "worker/apps/rooms_protocol.hpp"

namespace {

bool counting = false;
std::size_t allocated_bytes = 0;

// Bytes allocated while `fn` runs (frees are not subtracted: what counts
// is the work, not what is left).
template <class Fn>
std::size_t bytes_allocated_by(Fn&& fn) {
  allocated_bytes = 0;
  counting = true;
  fn();
  counting = false;
  return allocated_bytes;
}

}  // namespace

void* operator new(std::size_t n) {
  if (counting) allocated_bytes += n;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

constexpr std::size_t one_mib = 1024 * 1024;
constexpr std::size_t small_work = 64 * 1024;

TEST(JsonErrorPath, AMebibyteOfOpenBracketsIsRefusedWithoutBuildingADocument) {
  const std::string text(one_mib, '[');
  fg::worker::rooms_parse_result result;
  const std::size_t bytes = bytes_allocated_by([&] { result = fg::worker::parse_rooms_request(text); });
  EXPECT_FALSE(result.request.has_value());
  EXPECT_EQ(result.error, "invalid JSON: nested more than 512 levels deep");
  EXPECT_LT(bytes, small_work);
}

TEST(JsonErrorPath, AMebibyteOfUnclosedArrayStillSaysWhereItEnds) {
  // Shallow but long: the reason names the end of the input, as before.
  std::string text = "[";
  while (text.size() < one_mib) text += "1,";
  std::string reason;
  const std::size_t bytes = bytes_allocated_by([&] { reason = fg::json::syntax_error(text); });
  EXPECT_NE(reason.find("unexpected end of input"), std::string::npos) << reason;
  EXPECT_LT(bytes, small_work);
}

TEST(JsonErrorPath, ReasonsNameThePositionAndTheProblem) {
  EXPECT_EQ(fg::json::check_syntax(R"({"op":"join","room":"r"})"), std::nullopt);
  EXPECT_EQ(fg::json::check_syntax(std::string(512, '[') + std::string(512, ']')), std::nullopt);
  EXPECT_EQ(fg::json::check_syntax(std::string(513, '[') + std::string(513, ']')),
            "invalid JSON: nested more than 512 levels deep");
  const auto reason = fg::json::check_syntax("{\"op\":}");
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason,
            "invalid JSON: parse error at line 1, column 7: syntax error while parsing value - unexpected '}'; "
            "expected '[', '{', or a literal");
  EXPECT_EQ(fg::json::check_syntax("[1] x").has_value(), true);  // trailing bytes are an error
  EXPECT_EQ(fg::json::check_syntax("[[1]]", 1), "invalid JSON: nested more than 1 levels deep");
}

}  // namespace
