// The file sources the test seams install (initwarm/cli/seams.h): node facts
// and resolve answers read from JSON files. Test-only: linked into
// `initwarm-testing` and unit tests, never into the shipped initwarm.
#pragma once

#include <memory>
#include <string>

#include "initwarm/cli/seams.h"
#include "initwarm/gpu/probe.h"
#include "initwarm/net/resolve_client.h"

namespace kc::initwarm::testing {

// Facts from {"gpuProduct", "computeCapability", "driver", "cudaDriver",
// "arch"}; the source is named "file:<path>".
std::unique_ptr<Prober> NewFileProber(std::string path);
// The resolve endpoint's 200 body.
std::unique_ptr<Resolver> NewFileResolver(std::string path);
// Both, as seams.
Seams FileSeams();

}  // namespace kc::initwarm::testing
