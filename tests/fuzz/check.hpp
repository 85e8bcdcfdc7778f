// The fuzz targets' oracle: a broken property aborts, which is what
// libFuzzer (and the corpus replay under CTest) reports as a finding.
// assert() would vanish in the Release builds the replays run in.
#pragma once

#include <cstdlib>

namespace fg::fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace fg::fuzz
