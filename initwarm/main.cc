// initwarm: the cache data path of KernelCache (see docs/cache-layout.md).
// The shipped program: no crash hook is installed (initwarm/failpoint/failpoint.h).
//
//   initwarm <command> [flags]     initwarm <command> --help
#include "initwarm/cli/commands.h"

int main(int argc, char** argv) { return kc::initwarm::InitwarmMain(argc, argv); }
