// initwarm-testing: `initwarm` with its test hooks installed, for tests and
// benchmarks only, never shipped in an image:
//   - the KC_CRASH_AT crash hook (initwarm/testing/crash_at.h), for the
//     crash-safety tests (tests/initwarm/seal_crash_test.cc) and the fault
//     campaign (bench/faults/seal_faults.py);
//   - the file sources (initwarm/cli/seams.h): wait --probe-file and
//     --resolve-file, probe --facts-file.
#include "initwarm/cli/commands.h"
#include "initwarm/cli/seams.h"
#include "initwarm/testing/crash_at.h"
#include "initwarm/testing/file_sources.h"

int main(int argc, char** argv) {
  kc::initwarm::testing::InstallCrashAtFromEnv();
  kc::initwarm::InstallSeams(kc::initwarm::testing::FileSeams());
  return kc::initwarm::InitwarmMain(argc, argv);
}
