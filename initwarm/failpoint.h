// Failpoints: the one crash-injection mechanism of the crash-safety tests
// (test-only, deterministic).
//
// KC_CRASH_AT=<phase>:<n> makes the process die of `signal` the first time
// MaybeCrash(<phase>, k, signal) is called with k >= n. The phases:
//   seal (SIGKILL, a killed pod):
//     hash:<files hashed so far>     bytes:<bytes hashed so far>
//     fsync:<files fsynced so far>   dirsync:<directories fsynced so far>
//     manifest:<step 0..2>           publish:<step 0..6>
//   the CUDA module loader's child process (SIGSEGV, standing in for a
//   driver crash on a bad image):
//     load:<loads served so far by this child>
// The variable is read once per process, at its first MaybeCrash (a forked
// child that has not called it yet reads it itself). Unset (the
// production case), MaybeCrash does nothing.
#pragma once

#include <csignal>
#include <cstdint>
#include <string_view>

namespace kc::initwarm {

inline constexpr const char* kCrashEnv = "KC_CRASH_AT";
inline constexpr std::string_view kCrashPhaseLoad = "load";

void MaybeCrash(std::string_view phase, std::uint64_t n, int signal = SIGKILL);

}  // namespace kc::initwarm
