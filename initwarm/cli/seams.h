// Test seams: where a test-only build of initwarm (`initwarm-testing`,
// initwarm/testing/testing_main.cc) takes node facts and resolve answers
// from files instead of NVML and the operator. That program installs them
// before InitwarmMain; the shipped initwarm installs none, so its `wait`
// has no --probe-file or --resolve-file and its `probe` no --facts-file,
// and no file source is linked into it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "initwarm/gpu/probe.h"
#include "initwarm/net/resolve_client.h"

namespace kc::initwarm {

struct Seams {
  // Node facts from a JSON file ({"gpuProduct", "computeCapability",
  // "driver", "cudaDriver", "arch"}): wait --probe-file, probe --facts-file.
  std::function<std::unique_ptr<Prober>(const std::string& path)> file_prober;
  // The resolve endpoint's 200 body from a JSON file: wait --resolve-file.
  std::function<std::unique_ptr<Resolver>(const std::string& path)> file_resolver;
};

// Installs `s` for this process (before InitwarmMain; not thread-safe).
void InstallSeams(Seams s);
// What is installed; empty functions in the shipped program.
const Seams& InstalledSeams();

}  // namespace kc::initwarm
