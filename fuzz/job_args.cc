// Fuzz target: the codec of the initwarm commands' arguments the operator
// writes into its Jobs and sidecars (core/job_args.h). Input: the argv, one
// argument a line. Properties: no crash, no exception; for every command,
// arguments that decode encode to arguments that decode to the same struct.
#include "core/job_args.h"

#include <cstddef>
#include <cstdint>

#include "fuzz/util.h"

namespace {

template <class Parse, class Encode>
void RoundTrip(const std::vector<std::string>& argv, Parse parse, Encode encode) {
  auto decoded = parse(argv);
  if (!decoded.ok()) return;
  auto back = parse(encode(*decoded));
  kc::fuzz::Check(back.ok() && *back == *decoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace core = kc::core;
  const std::vector<std::string> argv = kc::fuzz::Split(kc::fuzz::AsText(data, size), '\n', 64);
  // Every decoder sees the input, whatever its first argument.
  RoundTrip(argv, core::ParsePrepareArgv, core::PrepareArgv);
  RoundTrip(argv, core::ParseSealArgv, core::SealArgv);
  RoundTrip(argv, core::ParseGcArgv, core::GcArgv);
  RoundTrip(argv, core::ParseHarvestArgv, core::HarvestArgv);
  RoundTrip(argv, core::ParseDriveArgv, core::DriveArgv);
  RoundTrip(argv, core::ParseMissesArgv, core::MissesArgv);
  RoundTrip(argv, core::ParseConvergeArgv, core::ConvergeArgv);
  return 0;
}
