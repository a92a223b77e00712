// Fuzz target: the gate's argument codec (core/gate_args.h), which decodes
// what `initwarm wait` is started with. Input: the argv, one argument a
// line. Properties: no crash, no exception; arguments that decode encode
// (GateArgv) to arguments that decode to the same GateArgs.
#include "core/gate_args.h"

#include <cstddef>
#include <cstdint>

#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kc::fuzz::Check;
  const std::vector<std::string> argv = kc::fuzz::Split(kc::fuzz::AsText(data, size), '\n', 64);
  auto decoded = kc::core::ParseGateArgv(argv);
  if (!decoded.ok()) return 0;
  auto back = kc::core::ParseGateArgv(kc::core::GateArgv(*decoded));
  Check(back.ok() && *back == *decoded);
  return 0;
}
