// ParallelFor: fn(0), ..., fn(n - 1) on `threads` workers that take the
// next index from a shared counter (callers order the work, e.g. largest
// first). The first error stops the workers from taking more indices and is
// returned once the calls already running have finished. threads <= 0: one.
#pragma once

#include <cstddef>
#include <functional>

#include "base/status.h"

namespace kc::initwarm {

Status ParallelFor(std::size_t n, int threads, const std::function<Status(std::size_t)>& fn);

}  // namespace kc::initwarm
