#include "core/gate_args.h"

namespace kc::core {

std::string EnvRef(std::string_view name) { return "$(" + std::string(name) + ")"; }

std::vector<std::string> GateArgv(const GateArgs& a) {
  auto flag = [](const char* name, const std::string& value) {
    return "--" + std::string(name) + "=" + value;
  };
  std::vector<std::string> argv = {
      kGateCommand,
      flag(gate_flag::kRoot, a.root),
      flag(gate_flag::kView, a.view),
      flag(gate_flag::kMode, a.mode),
      flag(gate_flag::kVerify, a.verify),
      flag(gate_flag::kTimeout, std::to_string(a.timeout_seconds) + "s"),
      flag(gate_flag::kOnTimeout, a.on_timeout),
      flag(gate_flag::kKernelCache, a.kernelcache),
      flag(gate_flag::kNamespace, a.ns),
      flag(gate_flag::kNode, a.node),
  };
  if (!a.resolve_url.empty()) argv.push_back(flag(gate_flag::kResolveUrl, a.resolve_url));
  return argv;
}

}  // namespace kc::core
