// How hard zlib works on a permessage-deflate message: the gateway's
// --deflate-level/--deflate-mem-level, and the worker's --publish-deflate.
#pragma once

namespace fg {

// Defaults measured in docs/BENCHMARKS.md: on JSON of 1-4 KiB, level 1
// gets 89-96% of level 6's ratio for 40-65% of its CPU.
struct deflate_tuning {
  int level = 1;      // zlib compression level 1..9
  int mem_level = 8;  // zlib memLevel 1..9: hash table and block buffer size
};

}  // namespace fg
