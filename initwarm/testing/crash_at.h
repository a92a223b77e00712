// The KC_CRASH_AT crash hook (initwarm/failpoint/failpoint.h), test-only: linked into
// `initwarm-testing` and the unit tests that inject crashes, never into
// the shipped `initwarm`.
//
// KC_CRASH_AT=<phase>:<n> (a phase CrashPhaseName names) makes the process
// die of the failpoint's signal the first time MaybeCrash(<phase>, k) runs
// with k >= n. The variable is read once per process, at its first
// MaybeCrash (a forked child that has not called it yet reads it itself).
// Unset or malformed, nothing crashes (a malformed value is reported on
// stderr once).
#pragma once

namespace kc::initwarm::testing {

inline constexpr const char* kCrashEnv = "KC_CRASH_AT";

void InstallCrashAtFromEnv();

}  // namespace kc::initwarm::testing
