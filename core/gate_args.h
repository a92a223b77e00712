// The gate's arguments: what the admission webhook
// (operator/webhook/mutate.cc) writes into the injected init container
// `kernelcache-wait` as `initwarm wait --<flag>=<value> ...`, and the flag
// names `initwarm wait` (initwarm/cli/wait_flags.cc) defines. One codec for both
// sides: the webhook encodes a GateArgs with GateArgv(); initwarm takes its
// flag names from gate_flag::* and decodes the values its flag parser read
// (from argv or the environment) with DecodeGateFlags(). ParseGateArgv()
// is GateArgv()'s inverse.
//
//   wait --root=<r> --view=<v> --mode=<Shared|SharedReadWrite|Copy>
//        --verify=<level> --timeout=<n>s --on-timeout=<Fail|StartCold>
//        --kernelcache=<name> --namespace=<ns> --node=<node>
//        [--resolve-url=<base URL>]
//
// The namespace and node are not known when the pod is admitted: the
// webhook passes "$(KC_NAMESPACE)" and "$(KC_NODE_NAME)" (EnvRef), which the
// kubelet expands from the container's env (downward API, gate_env::*).
// Decoding errors are InvalidArgument naming the flag and quoting the
// value: `--mode: "Link" is not one of Copy, Shared, SharedReadWrite`.
// Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/consume.h"
#include "core/layout.h"

namespace kc::core {

// The `initwarm wait` subcommand and the flag names (without "--").
inline constexpr char kGateCommand[] = "wait";
namespace gate_flag {
inline constexpr char kRoot[] = "root";
inline constexpr char kView[] = "view";
inline constexpr char kMode[] = "mode";
inline constexpr char kVerify[] = "verify";
inline constexpr char kTimeout[] = "timeout";
inline constexpr char kOnTimeout[] = "on-timeout";
inline constexpr char kKernelCache[] = "kernelcache";
inline constexpr char kNamespace[] = "namespace";
inline constexpr char kNode[] = "node";
inline constexpr char kResolveUrl[] = "resolve-url";
}  // namespace gate_flag

// Environment variables of the gate container (the webhook sets them from
// the downward API; initwarm also reads them as the flags' defaults).
namespace gate_env {
inline constexpr char kNamespace[] = "KC_NAMESPACE";
inline constexpr char kNodeName[] = "KC_NODE_NAME";
// The pod's kernelcache.io/parity-mismatch annotation (downward API): how
// it differs from what was warmed; the gate logs it and reports it.
inline constexpr char kParity[] = "KC_PARITY";
}  // namespace gate_env

// The defaults are those of `initwarm wait` run without the flag.
struct GateArgs {
  std::string root = std::string(kDefaultRoot);
  std::string view = std::string(kDefaultView);
  ConsumeMode mode = kDefaultConsumeMode;
  Level verify = kDefaultVerifyLevel;
  std::int64_t timeout_seconds = kDefaultWaitTimeoutSeconds;
  OnTimeout on_timeout = kDefaultOnTimeout;
  std::string kernelcache;
  std::string ns;
  std::string node;
  std::string resolve_url;  // "" = not passed
  friend bool operator==(const GateArgs&, const GateArgs&) = default;
};

// "$(NAME)": a reference the kubelet expands from the container's env.
std::string EnvRef(std::string_view name);

// {"wait", "--root=...", ...}: the container's args (command is initwarm).
std::vector<std::string> GateArgv(const GateArgs& a);

// Flag name (without "--") -> value as given, for the gate's flags.
using GateFlagValues = std::map<std::string, std::string, std::less<>>;

// The typed GateArgs of `values`; a flag absent from it keeps GateArgs'
// default. --timeout takes initwarm's durations ("600s", "10m", "600").
// A name that is not a gate flag is refused too.
StatusOr<GateArgs> DecodeGateFlags(const GateFlagValues& values);

// GateArgv()'s inverse: {"wait", "--<flag>=<value>", ...} with gate flags
// only, each at most once.
StatusOr<GateArgs> ParseGateArgv(const std::vector<std::string>& argv);

}  // namespace kc::core
