// initwarm-failpoints: `initwarm` with the KC_CRASH_AT crash hook installed
// (initwarm/testing/crash_at.h), for the crash-safety tests
// (tests/initwarm/seal_crash_test.cc) and the fault campaign
// (bench/faults/seal_faults.py). Test-only: never shipped in an image.
#include "initwarm/commands.h"
#include "initwarm/testing/crash_at.h"

int main(int argc, char** argv) {
  kc::initwarm::testing::InstallCrashAtFromEnv();
  return kc::initwarm::InitwarmMain(argc, argv);
}
