// Failpoints: the named crash points of the crash-safety tests.
//
// The shipped program only names the points: MaybeCrash(phase, n) calls the
// installed crash hook, and `initwarm` installs none, so it never crashes on
// purpose whatever its environment holds. The test-only program
// `initwarm-testing` (initwarm/testing/testing_main.cc) and the unit
// tests that need it install initwarm/testing/crash_at.h's hook, which reads
// KC_CRASH_AT=<phase>:<n> and makes the process die of `signal` the first
// time MaybeCrash(<phase>, k) runs with k >= n. The phases:
//   seal (SIGKILL, a killed pod):
//     hash:<files hashed so far>     bytes:<bytes hashed so far>
//     fsync:<files fsynced so far>   dirsync:<directories fsynced so far>
//     manifest:<step 0..1>           publish:<step 0..6>
//   the CUDA module loader's child process (SIGSEGV, standing in for a
//   driver crash on a bad image):
//     load:<loads served so far by this child>
#pragma once

#include <csignal>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace kc::initwarm {

enum class CrashPhase { kHash, kBytes, kFsync, kDirsync, kManifest, kPublish, kLoad };

// "hash", "bytes", "fsync", "dirsync", "manifest", "publish", "load".
std::string_view CrashPhaseName(CrashPhase phase);
// The inverse; InvalidArgument naming the phases otherwise.
StatusOr<CrashPhase> ParseCrashPhase(std::string_view name);

using CrashHook = void (*)(CrashPhase phase, std::uint64_t n, int signal);
// Installs `hook` for this process (and the children it forks later);
// nullptr removes it.
void SetCrashHook(CrashHook hook);

// Calls the installed hook, if any.
void MaybeCrash(CrashPhase phase, std::uint64_t n, int signal = SIGKILL);

}  // namespace kc::initwarm
