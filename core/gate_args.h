// The gate's arguments: what the admission webhook
// (operator/webhook/mutate.cc) writes into the injected init container
// `kernelcache-wait` as `initwarm wait --<flag>=<value> ...`, and the flag
// names `initwarm wait` (initwarm/cmd_wait.cc) defines. One codec for both
// sides: the webhook encodes a GateArgs with GateArgv(); initwarm takes its
// flag names from gate_flag::*.
//
//   wait --root=<r> --view=<v> --mode=<Shared|SharedReadWrite|Copy>
//        --verify=<level> --timeout=<n>s --on-timeout=<Fail|StartCold>
//        --kernelcache=<name> --namespace=<ns> --node=<node>
//        [--resolve-url=<base URL>]
//
// The namespace and node are not known when the pod is admitted: the
// webhook passes "$(KC_NAMESPACE)" and "$(KC_NODE_NAME)" (EnvRef), which the
// kubelet expands from the container's env (downward API, gate_env::*).
// Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
}  // namespace gate_env

struct GateArgs {
  std::string root;
  std::string view;
  std::string mode;    // core::consume_mode::*
  std::string verify;  // a core::Level name
  std::int64_t timeout_seconds = 0;
  std::string on_timeout;  // Fail | StartCold
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

}  // namespace kc::core
