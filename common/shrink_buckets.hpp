// A hash table's buckets, handed back once most of its elements are gone.
//
// libstdc++'s unordered containers never shrink their bucket array on
// erase: a table that once held 15,000 connections keeps 15,000 buckets
// (8 bytes each) after they leave. Rehashing to the count walks every
// element, so it is only worth it once the buckets are several times what
// the count needs: a steady churn dipping a few percent below its peak
// keeps its buckets, and its loop never pays for a rehash it would undo.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace fg {

// Buckets kept whatever the count: a small table is not worth a walk.
inline constexpr std::size_t shrink_buckets_floor = 64;
// How many times the needed buckets a table may keep before it shrinks.
inline constexpr std::size_t shrink_buckets_slack = 4;

// Shrinks `table`'s buckets to what its size needs when it holds more than
// shrink_buckets_slack times that; returns the bytes of buckets freed.
template <class Table>
std::size_t shrink_buckets(Table& table) {
  const auto needed = static_cast<std::size_t>(
      std::ceil(static_cast<double>(table.size()) / static_cast<double>(table.max_load_factor())));
  const std::size_t before = table.bucket_count();
  if (before <= std::max(needed, shrink_buckets_floor) * shrink_buckets_slack) return 0;
  table.rehash(0);
  const std::size_t after = table.bucket_count();
  return after < before ? (before - after) * sizeof(void*) : 0;
}

}  // namespace fg
