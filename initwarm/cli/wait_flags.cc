#include "initwarm/cli/wait_flags.h"

#include <algorithm>
#include <utility>

#include "core/exit_codes.h"
#include "core/gate_args.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/seams.h"

namespace kc::initwarm {

WaitFlags::WaitFlags() {
  const core::GateArgs defaults;
  const WaitOptions o;  // its intervals are the flags' defaults
  view = defaults.view;
  mode = std::string(core::ConsumeModeName(defaults.mode));
  verify = std::string(core::LevelName(defaults.verify));
  timeout = std::to_string(defaults.timeout_seconds) + "s";
  on_timeout = std::string(core::OnTimeoutName(defaults.on_timeout));
  poll_initial = std::chrono::seconds{o.poll_initial_ms / 1000};
  poll_max = std::chrono::seconds{o.poll_max_ms / 1000};
  log_every = std::chrono::seconds{o.log_every_s};
  digest_grace = std::chrono::seconds{o.digest_grace_s};
}

void AddWaitFlags(FlagSet* f, WaitFlags* w) {
  AddRootFlag(f, &w->root);
  f->String(core::gate_flag::kView, &w->view, "the cache view path").Env("KC_VIEW");
  f->String("view-prefix", &w->view_prefix, "the view path caches were written under")
      .DefaultText("--view");
  f->String("local-dir", &w->local_dir, "local (emptyDir) directory for copies and the cold view")
      .DefaultText("<view's parent>/local");
  f->String(core::gate_flag::kResolveUrl, &w->resolve_url,
            "the operator's resolve endpoint, http://host:port")
      .Env("KC_RESOLVE_URL");
  if (InstalledSeams().file_resolver) {
    f->String("resolve-file", &w->resolve_file,
              "read the resolve answer from this JSON file (test builds only)");
  }
  f->String(core::gate_flag::kNamespace, &w->ns, "this pod's namespace")
      .Env(core::gate_env::kNamespace);
  f->String(core::gate_flag::kKernelCache, &w->kernelcache, "the KernelCache gating this pod")
      .Env("KC_KERNELCACHE");
  f->String(core::gate_flag::kNode, &w->node, "this pod's node name")
      .Env(core::gate_env::kNodeName);
  f->String("fingerprint", &w->fingerprint,
            "use this fingerprint (skips resolving when no resolver given)")
      .Env("KC_FINGERPRINT");
  f->String(core::gate_flag::kMode, &w->mode, "Copy|Shared|SharedReadWrite").Env("KC_CONSUME_MODE");
  f->String(core::gate_flag::kVerify, &w->verify,
            "Manifest|Fingerprint|Checksums|TargetArch|LoadTest")
      .Env("KC_VERIFY");
  f->String(core::gate_flag::kTimeout, &w->timeout,
            "how long to wait for READY (" + DurationExamples(kInitwarmDurations) + ")")
      .Env("KC_WAIT_TIMEOUT");
  f->String(core::gate_flag::kOnTimeout, &w->on_timeout, "Fail|StartCold").Env("KC_ON_TIMEOUT");
  f->Duration("poll-initial", &w->poll_initial, kInitwarmDurations, "first poll interval");
  f->Duration("poll-max", &w->poll_max, kInitwarmDurations, "poll interval cap");
  f->Duration("log-every", &w->log_every, kInitwarmDurations, "interval of the human status line");
  f->Duration("digest-grace", &w->digest_grace, kInitwarmDurations,
              "how long a READY whose digest differs from the operator's is given before it is "
              "refused (the operator records a fresh re-warm moments after it is sealed)");
  f->Bool("no-probe", &w->no_probe, "do not cross-check with the local GPU probe");
  if (InstalledSeams().file_prober) {
    f->String("probe-file", &w->probe_file,
              "read probed node facts from this JSON file (test builds only)");
  }
  f->Bool("no-quarantine", &w->no_quarantine, "never move a cache that fails validation");
  AddTerminationLogFlag(f, &w->termination_log);
}

StatusOr<WaitCommand> DecodeWaitFlags(const WaitFlags& w) {
  namespace flag = core::gate_flag;
  KC_ASSIGN_OR_RETURN(core::GateArgs gate,
                      core::DecodeGateFlags({{flag::kRoot, w.root},
                                             {flag::kView, w.view},
                                             {flag::kMode, w.mode},
                                             {flag::kVerify, w.verify},
                                             {flag::kTimeout, w.timeout},
                                             {flag::kOnTimeout, w.on_timeout},
                                             {flag::kKernelCache, w.kernelcache},
                                             {flag::kNamespace, w.ns},
                                             {flag::kNode, w.node},
                                             {flag::kResolveUrl, w.resolve_url}}));
  WaitCommand c;
  WaitOptions& o = c.options;
  // Absolute paths: the view becomes a symlink to a directory under root.
  o.root = AbsolutePath(gate.root);
  o.view = AbsolutePath(gate.view);
  o.view_prefix = AbsolutePath(w.view_prefix.empty() ? gate.view : w.view_prefix);
  o.local_dir = w.local_dir;
  o.quarantine = !w.no_quarantine;
  o.fingerprint = w.fingerprint;
  o.mode = gate.mode;
  o.verify = gate.verify;
  o.start_cold_on_timeout = gate.on_timeout == core::OnTimeout::kStartCold;
  o.timeout_s = gate.timeout_seconds;
  o.kernelcache = gate.kernelcache;
  o.ns = gate.ns;
  o.node = gate.node;
  o.poll_initial_ms = std::max<std::int64_t>(1, w.poll_initial.count()) * 1000;
  o.poll_max_ms = std::max<std::int64_t>(1, w.poll_max.count()) * 1000;
  o.log_every_s = w.log_every.count();
  o.digest_grace_s = w.digest_grace.count();
  c.resolve_url = gate.resolve_url;
  c.resolve_file = w.resolve_file;
  c.probe_file = w.probe_file;
  c.probe = !w.no_probe;
  if (c.resolve_file.empty() && !c.resolve_url.empty() &&
      (o.ns.empty() || o.kernelcache.empty() || o.node.empty())) {
    return InvalidArgumentError(
        "--resolve-url needs --namespace, --kernelcache and --node (or KC_NAMESPACE, "
        "KC_KERNELCACHE, KC_NODE_NAME)");
  }
  return c;
}

int WaitExitCode(const Status& s) {
  static constexpr std::pair<StatusCode, int> kExitCodes[] = {
      {StatusCode::kOk, core::kExitOk},
      {StatusCode::kDeadlineExceeded, core::kExitTimeout},
      {StatusCode::kFailedPrecondition, core::kExitMismatch},
      {StatusCode::kDataLoss, core::kExitInvalid},
      {StatusCode::kNotFound, core::kExitNoCache},
      {StatusCode::kInvalidArgument, core::kExitUsage},
  };
  return ExitCodeOf(s, kExitCodes);
}

}  // namespace kc::initwarm
