// raw_io: the yardstick bench_seal measures seal against, and the page-cache
// controls of a cold pass.
//
// ReadAll reads every file with the pool shape of initwarm::HashFiles
// (`threads` workers taking files largest first from a shared index, 1 MiB
// reads, POSIX_FADV_SEQUENTIAL) and does nothing with the bytes; returns
// the bytes read. DropCache drops each file's clean pages
// (posix_fadvise(DONTNEED); dentries and inodes stay cached).
#pragma once

#include <cstdint>
#include <vector>

#include "initwarm/fs/hasher.h"

namespace kc::bench {

std::uint64_t ReadAll(const std::vector<initwarm::HashJob>& jobs, int threads);
void DropCache(const std::vector<initwarm::HashJob>& jobs);

// Monotonic wall seconds, and CPU seconds (user + system) of this process.
double Now();
double CpuSeconds();

}  // namespace kc::bench
