// The initwarm command line: the command table and its dispatch
// (InitwarmMain, commands.h). The programs are initwarm/main.cc (`initwarm`)
// and the test-only initwarm/testing/testing_main.cc (`initwarm-testing`).
//
//   initwarm <command> [flags]     initwarm <command> --help
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "core/exit_codes.h"
#include "initwarm/cli/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
  const char* summary;
};

const Command kCommands[] = {
    {"prepare", kc::initwarm::RunPrepare,
     "warmup init: staging directory, view symlink, single-writer lock"},
    {"seal", kc::initwarm::RunSeal, "warmup main: hash, manifest, atomic publish, READY"},
    {"converge", kc::initwarm::RunConverge,
     "warmup container: run the warmup command again until a pass compiles nothing"},
    {"drive", kc::initwarm::RunDrive,
     "server warmup main: send the request plan to the model server, detach the view, seal"},
    {"wait", kc::initwarm::RunWait,
     "model pod init: resolve fingerprint, wait for READY, validate, build the view"},
    {"verify", kc::initwarm::RunVerify, "the validation ladder; quarantines a bad cache"},
    {"probe", kc::initwarm::RunProbe, "this node's fingerprint facts from NVML and libcuda"},
    {"gc", kc::initwarm::RunGc, "remove unkept fingerprints, old staging and quarantine"},
    {"inspect", kc::initwarm::RunInspect, "human summary of a cache volume"},
    {"misses", kc::initwarm::RunMisses,
     "what serving processes compiled into a gated pod's view after its gate"},
    {"harvest", kc::initwarm::RunHarvest,
     "harvest Job: merge what gated pods compiled into a new generation of a cache"},
};

void Usage(std::ostream& os) {
  os << "usage: initwarm <command> [flags]   (initwarm <command> --help for its flags)\n\n"
        "commands:\n";
  for (const auto& c : kCommands) os << "  " << c.name << "\t" << c.summary << "\n";
  os << "\nexit codes: 0 ok; 1 error; 2 bad flags; others per command (see --help, "
        "docs/cache-layout.md)\n";
}

}  // namespace

namespace kc::initwarm {

int InitwarmMain(int argc, char** argv) {
  if (argc < 2) {
    Usage(std::cerr);
    return kc::core::kExitUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    Usage(std::cout);
    return kc::core::kExitOk;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& c : kCommands) {
    if (cmd == c.name) return c.run(args);
  }
  std::cerr << "initwarm: unknown command \"" << cmd << "\"\n";
  Usage(std::cerr);
  return kc::core::kExitUsage;
}

}  // namespace kc::initwarm
