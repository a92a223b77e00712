// Failpoints for the crash-safety suite (test-only, deterministic).
//
// KC_SEAL_CRASH_AT=<phase>:<n> makes the process raise SIGKILL the first
// time MaybeCrash(<phase>, k) is called with k >= n. seal calls it at:
//   hash:<files hashed so far>     bytes:<bytes hashed so far>
//   fsync:<files fsynced so far>   dirsync:<directories fsynced so far>
//   manifest:<step 0..2>           publish:<step 0..6>
// Unset (the production case), MaybeCrash does nothing.
#pragma once

#include <cstdint>
#include <string_view>

namespace kc::initwarm {

inline constexpr const char* kCrashEnv = "KC_SEAL_CRASH_AT";

void MaybeCrash(std::string_view phase, std::uint64_t n);

}  // namespace kc::initwarm
