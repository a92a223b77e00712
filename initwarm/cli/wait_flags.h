// The flags of `initwarm wait` (cmd_wait.cc): declared on a FlagSet, bound
// to WaitFlags, and decoded into the WaitOptions and the dependencies'
// sources a wait runs with. The gate's own flags (core/gate_args.h) are read
// as text and decoded by the codec the webhook encodes them with.
#pragma once

#include <chrono>
#include <string>

#include "base/flags.h"
#include "base/status.h"
#include "initwarm/gate/wait.h"

namespace kc::initwarm {

// The flags as given (the gate's as text); defaults are the flags'.
struct WaitFlags {
  WaitFlags();
  std::string root;
  std::string view;
  std::string view_prefix;
  std::string local_dir;
  std::string resolve_url;
  std::string resolve_file;
  std::string ns, kernelcache, node;
  std::string fingerprint;
  std::string mode;
  std::string verify;
  std::string timeout;
  std::string on_timeout;
  std::chrono::seconds poll_initial;
  std::chrono::seconds poll_max;
  std::chrono::seconds log_every;
  std::chrono::seconds digest_grace;
  bool no_probe = false;
  std::string probe_file;
  bool no_quarantine = false;
  std::string termination_log;
};

// Declares every flag of `initwarm wait` on `f`, bound to `flags`.
void AddWaitFlags(FlagSet* f, WaitFlags* flags);

// What a wait runs with: its options, and where its answers and facts come
// from.
struct WaitCommand {
  WaitOptions options;
  std::string resolve_url;   // "" = no HTTP resolver
  std::string resolve_file;  // "" = none; wins over resolve_url
  std::string probe_file;    // "" = none; wins over the NVML probe
  bool probe = true;         // cross-check with the NVML probe
};

// Decodes the flags (paths made absolute). InvalidArgument naming the flag
// for a bad value, and when --resolve-url lacks --namespace, --kernelcache
// or --node.
StatusOr<WaitCommand> DecodeWaitFlags(const WaitFlags& flags);

// The exit code (core/exit_codes.h) of a wait that ended with `s`.
int WaitExitCode(const Status& s);

}  // namespace kc::initwarm
