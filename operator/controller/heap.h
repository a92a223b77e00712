// The operator's heap on glibc: fewer malloc arenas and freed pages handed
// back, so the resident set follows the live objects, not the high-water of
// a relist.
//
// glibc gives each thread that contends for malloc an arena of its own (up
// to 8 per core) and keeps freed memory in them; an informer's list (pages
// of JSON parsed on its own thread) leaves its peak resident in its arena
// long after the objects are transformed and the page is gone. bench/scale
// measured it (docs/benchmarks.md, Scale).
// Elsewhere these are no-ops.
#pragma once

#include <chrono>
#include <thread>

namespace kc::op {

// At most `arenas` malloc arenas; call before any thread starts.
void LimitMallocArenas(int arenas);

// Hands freed heap pages back to the kernel (malloc_trim) every `interval`
// on a thread of its own, until destroyed.
class HeapTrimmer {
 public:
  explicit HeapTrimmer(std::chrono::milliseconds interval);

 private:
  std::jthread thread_;
};

// One malloc_trim now (after a sync); false where unsupported.
bool TrimHeap();

}  // namespace kc::op
