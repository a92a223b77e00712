#include "core/gate_args.h"

#include "base/duration.h"

namespace kc::core {

std::string EnvRef(std::string_view name) { return "$(" + std::string(name) + ")"; }

std::vector<std::string> GateArgv(const GateArgs& a) {
  auto flag = [](const char* name, std::string_view value) {
    return "--" + std::string(name) + "=" + std::string(value);
  };
  std::vector<std::string> argv = {
      kGateCommand,
      flag(gate_flag::kRoot, a.root),
      flag(gate_flag::kView, a.view),
      flag(gate_flag::kMode, ConsumeModeName(a.mode)),
      flag(gate_flag::kVerify, LevelName(a.verify)),
      flag(gate_flag::kTimeout, std::to_string(a.timeout_seconds) + "s"),
      flag(gate_flag::kOnTimeout, OnTimeoutName(a.on_timeout)),
      flag(gate_flag::kKernelCache, a.kernelcache),
      flag(gate_flag::kNamespace, a.ns),
      flag(gate_flag::kNode, a.node),
  };
  if (!a.resolve_url.empty()) argv.push_back(flag(gate_flag::kResolveUrl, a.resolve_url));
  return argv;
}

StatusOr<GateArgs> DecodeGateFlags(const GateFlagValues& values) {
  GateArgs a;
  for (const auto& flag : values) {
    const std::string& name = flag.first;
    const std::string& value = flag.second;
    auto named = [&name](const Status& s) { return s.WithContext("--" + name); };
    if (name == gate_flag::kRoot) {
      a.root = value;
    } else if (name == gate_flag::kView) {
      a.view = value;
    } else if (name == gate_flag::kMode) {
      auto m = ParseConsumeMode(value);
      if (!m.ok()) return named(m.status());
      a.mode = *m;
    } else if (name == gate_flag::kVerify) {
      auto l = ParseLevel(value);
      if (!l.ok()) return named(l.status());
      a.verify = *l;
    } else if (name == gate_flag::kTimeout) {
      auto d = ParseDuration(value, kInitwarmDurations);
      if (!d.ok()) return named(d.status());
      a.timeout_seconds = d->count();
    } else if (name == gate_flag::kOnTimeout) {
      auto t = ParseOnTimeout(value);
      if (!t.ok()) return named(t.status());
      a.on_timeout = *t;
    } else if (name == gate_flag::kKernelCache) {
      a.kernelcache = value;
    } else if (name == gate_flag::kNamespace) {
      a.ns = value;
    } else if (name == gate_flag::kNode) {
      a.node = value;
    } else if (name == gate_flag::kResolveUrl) {
      a.resolve_url = value;
    } else {
      return InvalidArgumentError("--" + name.substr(0, 64) + " is not a flag of initwarm " +
                                  kGateCommand);
    }
  }
  return a;
}

StatusOr<GateArgs> ParseGateArgv(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] != kGateCommand) {
    return InvalidArgumentError(std::string("gate arguments must start with \"") + kGateCommand +
                                "\"");
  }
  GateFlagValues values;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view arg = argv[i];
    const size_t eq = arg.find('=');
    if (!arg.starts_with("--") || eq == std::string_view::npos || eq == 2) {
      return InvalidArgumentError("gate argument \"" + std::string(arg.substr(0, 64)) +
                                  "\" is not --<flag>=<value>");
    }
    std::string name(arg.substr(2, eq - 2));
    if (!values.emplace(name, std::string(arg.substr(eq + 1))).second) {
      return InvalidArgumentError("--" + name.substr(0, 64) + " is given twice");
    }
  }
  return DecodeGateFlags(values);
}

}  // namespace kc::core
