// `initwarm wait`: the model pod's init container.
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/exit_codes.h"
#include "core/gate_args.h"
#include "core/gate_report.h"
#include "initwarm/cmd_common.h"
#include "initwarm/commands.h"
#include "initwarm/cuda_module_loader.h"
#include "initwarm/wait.h"

namespace kc::initwarm {

int RunWait(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("wait"),
            "Resolves this pod's fingerprint through the operator (cross-checked with a local "
            "GPU probe where a GPU is visible), waits for v1/<fingerprint>/READY with capped "
            "exponential backoff, validates the cache up to --verify, and points the cache view "
            "at it (Shared: a local tree of symlinks into the volume that takes new entries, "
            "nv/ copied; SharedReadWrite: deprecated, as Shared; Copy: a validated local copy). "
            "Logs one line every --log-every saying why it waits.\n\n"
            "A cache that fails validation (or whose manifest digest differs from the one the "
            "operator recorded) is quarantined and the wait ends at once; so does a final answer "
            "of the operator (invalid spec, node not selected or without GPU labels). The JSON "
            "gate report (core/gate_report.h) goes to stdout and the termination log, where the "
            "operator reads it.\n\n"
            "exit codes: 0 the view is ready (warm, or empty under --on-timeout StartCold; the "
            "last line says which); 3 timed out, or the warmup failed, with --on-timeout Fail; "
            "4 the operator's fingerprint and the local GPU probe disagree; 9 the cache failed "
            "validation (quarantined; the operator re-warms it) with --on-timeout Fail; 10 the "
            "operator says this pod gets no cache, with --on-timeout Fail; 2 bad flags; 1 other "
            "error (e.g. the view could not be built).");
  WaitOptions o;  // its intervals are the flags' defaults
  // The gate's flags (core/gate_args.h), read as text and decoded below by
  // the codec the webhook encodes them with; their defaults are its.
  const core::GateArgs defaults;
  std::string root;
  std::string view = defaults.view;
  std::string view_prefix;
  std::string local_dir;
  std::string resolve_url;
  std::string resolve_file;
  std::string mode(core::ConsumeModeName(defaults.mode));
  std::string verify(core::LevelName(defaults.verify));
  std::string timeout = std::to_string(defaults.timeout_seconds) + "s";
  std::string on_timeout(core::OnTimeoutName(defaults.on_timeout));
  std::chrono::seconds poll_initial{o.poll_initial_ms / 1000};
  std::chrono::seconds poll_max{o.poll_max_ms / 1000};
  std::chrono::seconds log_every{o.log_every_s};
  std::chrono::seconds digest_grace{o.digest_grace_s};
  bool no_probe = false;
  std::string probe_file;
  bool no_quarantine = false;
  std::string termination_log;
  AddRootFlag(&f, &root);
  f.String(core::gate_flag::kView, &view, "the cache view path").Env("KC_VIEW");
  f.String("view-prefix", &view_prefix, "the view path caches were written under")
      .DefaultText("--view");
  f.String("local-dir", &local_dir, "local (emptyDir) directory for copies and the cold view")
      .DefaultText("<view's parent>/local");
  f.String(core::gate_flag::kResolveUrl, &resolve_url,
           "the operator's resolve endpoint, http://host:port")
      .Env("KC_RESOLVE_URL");
  f.String("resolve-file", &resolve_file,
           "read the resolve answer from this JSON file (tests, offline)");
  f.String(core::gate_flag::kNamespace, &o.ns, "this pod's namespace")
      .Env(core::gate_env::kNamespace);
  f.String(core::gate_flag::kKernelCache, &o.kernelcache, "the KernelCache gating this pod")
      .Env("KC_KERNELCACHE");
  f.String(core::gate_flag::kNode, &o.node, "this pod's node name").Env(core::gate_env::kNodeName);
  f.String("fingerprint", &o.fingerprint,
           "use this fingerprint (skips resolving when no resolver given)")
      .Env("KC_FINGERPRINT");
  f.String(core::gate_flag::kMode, &mode, "Copy|Shared|SharedReadWrite").Env("KC_CONSUME_MODE");
  f.String(core::gate_flag::kVerify, &verify, "Manifest|Fingerprint|Checksums|TargetArch|LoadTest")
      .Env("KC_VERIFY");
  f.String(core::gate_flag::kTimeout, &timeout,
           "how long to wait for READY (" + DurationExamples(kInitwarmDurations) + ")")
      .Env("KC_WAIT_TIMEOUT");
  f.String(core::gate_flag::kOnTimeout, &on_timeout, "Fail|StartCold").Env("KC_ON_TIMEOUT");
  f.Duration("poll-initial", &poll_initial, kInitwarmDurations, "first poll interval");
  f.Duration("poll-max", &poll_max, kInitwarmDurations, "poll interval cap");
  f.Duration("log-every", &log_every, kInitwarmDurations, "interval of the human status line");
  f.Duration("digest-grace", &digest_grace, kInitwarmDurations,
             "how long a READY whose digest differs from the operator's is given before it is "
             "refused (the operator records a fresh re-warm moments after it is sealed)");
  f.Bool("no-probe", &no_probe, "do not cross-check with the local GPU probe");
  f.String("probe-file", &probe_file, "read probed node facts from this JSON file (tests)");
  f.Bool("no-quarantine", &no_quarantine, "never move a cache that fails validation");
  AddTerminationLogFlag(&f, &termination_log);
  if (int rc = ParseOrExit("wait", &f, args); rc >= 0) return rc;

  auto usage = [](const Status& s) {
    PrintError("wait", s);
    return core::kExitUsage;
  };
  namespace flag = core::gate_flag;
  auto gate = core::DecodeGateFlags({{flag::kRoot, root},
                                     {flag::kView, view},
                                     {flag::kMode, mode},
                                     {flag::kVerify, verify},
                                     {flag::kTimeout, timeout},
                                     {flag::kOnTimeout, on_timeout},
                                     {flag::kKernelCache, o.kernelcache},
                                     {flag::kNamespace, o.ns},
                                     {flag::kNode, o.node},
                                     {flag::kResolveUrl, resolve_url}});
  if (!gate.ok()) return usage(gate.status());
  // Absolute paths: the view becomes a symlink to a directory under root.
  o.root = AbsolutePath(gate->root);
  o.view = AbsolutePath(gate->view);
  o.view_prefix = AbsolutePath(view_prefix.empty() ? gate->view : view_prefix);
  o.local_dir = local_dir;
  o.quarantine = !no_quarantine;
  o.mode = gate->mode;
  o.verify = gate->verify;
  o.start_cold_on_timeout = gate->on_timeout == core::OnTimeout::kStartCold;
  o.timeout_s = gate->timeout_seconds;
  o.kernelcache = gate->kernelcache;
  o.ns = gate->ns;
  o.node = gate->node;
  o.poll_initial_ms = std::max<std::int64_t>(1, poll_initial.count()) * 1000;
  o.poll_max_ms = std::max<std::int64_t>(1, poll_max.count()) * 1000;
  o.log_every_s = log_every.count();
  o.digest_grace_s = digest_grace.count();

  std::unique_ptr<Resolver> resolver;
  if (!resolve_file.empty()) {
    resolver = NewFileResolver(resolve_file);
  } else if (!gate->resolve_url.empty()) {
    if (o.ns.empty() || o.kernelcache.empty() || o.node.empty()) {
      return usage(InvalidArgumentError(
          "--resolve-url needs --namespace, --kernelcache and --node (or KC_NAMESPACE, "
          "KC_KERNELCACHE, KC_NODE_NAME)"));
    }
    resolver = NewHttpResolver(gate->resolve_url);
  }
  std::unique_ptr<Prober> prober;
  if (!probe_file.empty()) {
    prober = NewFileProber(probe_file);
  } else if (!no_probe) {
    prober = NewNvmlProber();
  }
  std::unique_ptr<ModuleLoader> loader;
  WaitDeps deps;
  deps.resolver = resolver.get();
  deps.prober = prober.get();
  if (o.verify == core::Level::kLoadTest) {
    auto l = NewCudaModuleLoader();
    if (l.ok()) {
      loader = std::move(*l);
      deps.load_cubin = [&loader](std::string_view image, std::string_view name) {
        return loader->LoadCubin(image, name);
      };
    } else {
      std::cerr << "initwarm wait: LoadTest unavailable: " << l.status().message() << "\n";
    }
  }
  core::GateReport report;
  auto r = Wait(o, deps, &report);
  const std::string report_json = core::GateReportToJson(report);
  std::cout << report_json << "\n";
  WriteTerminationMessage(f, termination_log, report_json);
  if (!r.ok()) {
    PrintError("wait", r.status());
    switch (r.status().code()) {
      case StatusCode::kDeadlineExceeded:
        return core::kExitTimeout;
      case StatusCode::kFailedPrecondition:
        return core::kExitMismatch;
      case StatusCode::kDataLoss:
        return core::kExitInvalid;
      case StatusCode::kNotFound:
        return core::kExitNoCache;
      case StatusCode::kInvalidArgument:
        return core::kExitUsage;
      default:
        return core::kExitError;
    }
  }
  std::cerr << "initwarm wait: "
            << (r->outcome == core::GateOutcome::kWarm ? "view ready: " : "starting cold: ")
            << o.view.string() << " -> " << r->target.string() << " (" << r->reason << ")\n";
  return core::kExitOk;
}

}  // namespace kc::initwarm
