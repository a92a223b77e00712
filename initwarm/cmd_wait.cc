// `initwarm wait`: the model pod's init container.
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/gate_args.h"
#include "core/gate_report.h"
#include "initwarm/cmd_common.h"
#include "initwarm/commands.h"
#include "initwarm/cuda_module_loader.h"
#include "initwarm/exit_codes.h"
#include "initwarm/wait.h"

namespace kc::initwarm {

int RunWait(const std::vector<std::string>& args) {
  Flags f("wait",
          "Resolves this pod's fingerprint through the operator (cross-checked with a local "
          "GPU probe where a GPU is visible), waits for v1/<fingerprint>/READY with capped "
          "exponential backoff, validates the cache up to --verify, and points the cache view "
          "at it (Shared/SharedReadWrite: a symlink into the volume; Copy: a validated local "
          "copy). Logs one line every --log-every saying why it waits.\n\n"
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
  AddRootFlag(&f);
  f.String(core::gate_flag::kView, std::string(core::kDefaultView), "the cache view path",
           "KC_VIEW");
  f.String("view-prefix", "", "the view path caches were written under (default: --view)");
  f.String("local-dir", "",
           "local (emptyDir) directory for copies and the cold view "
           "(default: <view's parent>/local)");
  f.String(core::gate_flag::kResolveUrl, "", "the operator's resolve endpoint, http://host:port",
           "KC_RESOLVE_URL");
  f.String("resolve-file", "", "read the resolve answer from this JSON file (tests, offline)");
  f.String(core::gate_flag::kNamespace, "", "this pod's namespace", core::gate_env::kNamespace);
  f.String(core::gate_flag::kKernelCache, "", "the KernelCache gating this pod", "KC_KERNELCACHE");
  f.String(core::gate_flag::kNode, "", "this pod's node name", core::gate_env::kNodeName);
  f.String("fingerprint", "", "use this fingerprint (skips resolving when no resolver given)",
           "KC_FINGERPRINT");
  f.String(core::gate_flag::kMode, "Shared", "Shared|SharedReadWrite|Copy", "KC_CONSUME_MODE");
  f.String(core::gate_flag::kVerify, "Manifest",
           "Manifest|Fingerprint|Checksums|TargetArch|LoadTest", "KC_VERIFY");
  f.String(core::gate_flag::kTimeout, "900s", "how long to wait for READY", "KC_WAIT_TIMEOUT");
  f.String(core::gate_flag::kOnTimeout, "Fail", "Fail|StartCold", "KC_ON_TIMEOUT");
  f.String("poll-initial", "1s", "first poll interval");
  f.String("poll-max", "15s", "poll interval cap");
  f.String("log-every", "10s", "interval of the human status line");
  f.String("digest-grace", "30s",
           "how long a READY whose digest differs from the operator's is given before it is "
           "refused (the operator records a fresh re-warm moments after it is sealed)");
  f.Bool("no-probe", "do not cross-check with the local GPU probe");
  f.String("probe-file", "", "read probed node facts from this JSON file (tests)");
  f.Bool("no-quarantine", "never move a cache that fails validation");
  AddTerminationLogFlag(&f);
  if (int rc = ParseOrExit(&f, args); rc >= 0) return rc;

  auto usage = [](const Status& s) {
    PrintError("wait", s);
    return kExitUsage;
  };
  WaitOptions o;
  // Absolute paths: the view becomes a symlink to a directory under root.
  o.root = AbsolutePath(f.Get(core::gate_flag::kRoot));
  o.view = AbsolutePath(f.Get(core::gate_flag::kView));
  o.view_prefix = AbsolutePath(f.Get("view-prefix").empty() ? f.Get(core::gate_flag::kView)
                                                            : f.Get("view-prefix"));
  o.local_dir = f.Get("local-dir");
  o.ns = f.Get(core::gate_flag::kNamespace);
  o.kernelcache = f.Get(core::gate_flag::kKernelCache);
  o.node = f.Get(core::gate_flag::kNode);
  o.fingerprint = f.Get("fingerprint");
  o.quarantine = !f.GetBool("no-quarantine");
  auto mode = ParseConsumeMode(f.Get(core::gate_flag::kMode));
  if (!mode.ok()) return usage(mode.status());
  o.mode = *mode;
  auto level = core::ParseLevel(f.Get(core::gate_flag::kVerify));
  if (!level.ok()) return usage(level.status());
  o.verify = *level;
  const std::string& on_timeout = f.Get(core::gate_flag::kOnTimeout);
  if (on_timeout != "Fail" && on_timeout != "StartCold") {
    return usage(InvalidArgumentError("--on-timeout \"" + on_timeout +
                                      "\" is unknown: want Fail or StartCold"));
  }
  o.start_cold_on_timeout = on_timeout == "StartCold";
  for (const char* name : {"timeout", "poll-initial", "poll-max", "log-every", "digest-grace"}) {
    auto v = f.GetSeconds(name);
    if (!v.ok()) return usage(v.status());
  }
  o.timeout_s = *f.GetSeconds(core::gate_flag::kTimeout);
  o.poll_initial_ms = std::max<std::int64_t>(1, *f.GetSeconds("poll-initial")) * 1000;
  o.poll_max_ms = std::max<std::int64_t>(1, *f.GetSeconds("poll-max")) * 1000;
  o.log_every_s = *f.GetSeconds("log-every");
  o.digest_grace_s = *f.GetSeconds("digest-grace");

  std::unique_ptr<Resolver> resolver;
  if (!f.Get("resolve-file").empty()) {
    resolver = NewFileResolver(f.Get("resolve-file"));
  } else if (!f.Get(core::gate_flag::kResolveUrl).empty()) {
    if (o.ns.empty() || o.kernelcache.empty() || o.node.empty()) {
      return usage(InvalidArgumentError(
          "--resolve-url needs --namespace, --kernelcache and --node (or KC_NAMESPACE, "
          "KC_KERNELCACHE, KC_NODE_NAME)"));
    }
    resolver = NewHttpResolver(f.Get(core::gate_flag::kResolveUrl));
  }
  std::unique_ptr<Prober> prober;
  if (!f.Get("probe-file").empty()) {
    prober = NewFileProber(f.Get("probe-file"));
  } else if (!f.GetBool("no-probe")) {
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
  WriteTerminationMessage(f, report_json);
  if (!r.ok()) {
    PrintError("wait", r.status());
    switch (r.status().code()) {
      case StatusCode::kDeadlineExceeded:
        return kExitTimeout;
      case StatusCode::kFailedPrecondition:
        return kExitMismatch;
      case StatusCode::kDataLoss:
        return kExitInvalid;
      case StatusCode::kNotFound:
        return kExitNoCache;
      case StatusCode::kInvalidArgument:
        return kExitUsage;
      default:
        return kExitError;
    }
  }
  std::cerr << "initwarm wait: " << (r->outcome == "Warm" ? "view ready: " : "starting cold: ")
            << o.view.string() << " -> " << r->target.string() << " (" << r->reason << ")\n";
  return kExitOk;
}

}  // namespace kc::initwarm
