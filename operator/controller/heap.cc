#include "operator/controller/heap.h"

#include <condition_variable>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kc::op {

void LimitMallocArenas(int arenas) {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, arenas);
#else
  (void)arenas;
#endif
}

bool TrimHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
  return true;
#else
  return false;
#endif
}

HeapTrimmer::HeapTrimmer(std::chrono::milliseconds interval)
    : thread_([interval](const std::stop_token& stop) {
        std::mutex mu;
        std::condition_variable_any cv;
        std::unique_lock<std::mutex> l(mu);
        while (!cv.wait_for(l, stop, interval, [] { return false; })) {
          if (stop.stop_requested()) return;
          TrimHeap();
        }
      }) {}

}  // namespace kc::op
