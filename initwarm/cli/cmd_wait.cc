// `initwarm wait`: the model pod's init container.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/exit_codes.h"
#include "core/gate_args.h"
#include "core/gate_report.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/cli/seams.h"
#include "initwarm/cli/wait_flags.h"
#include "initwarm/gate/wait.h"
#include "initwarm/gpu/cuda_module_loader.h"

namespace kc::initwarm {

namespace {

// Where a wait's answers, facts and cubin loads come from; `deps` points
// into the rest, so a WaitServices stays where it was built.
struct WaitServices {
  std::unique_ptr<Resolver> resolver;
  std::unique_ptr<Prober> prober;
  std::unique_ptr<ModuleLoader> loader;
  WaitDeps deps;
};

void BuildWaitServices(const WaitCommand& c, WaitServices* s) {
  const Seams& seams = InstalledSeams();
  if (!c.resolve_file.empty() && seams.file_resolver) {
    s->resolver = seams.file_resolver(c.resolve_file);
  } else if (!c.resolve_url.empty()) {
    s->resolver = NewHttpResolver(c.resolve_url);
  }
  if (!c.probe_file.empty() && seams.file_prober) {
    s->prober = seams.file_prober(c.probe_file);
  } else if (c.probe) {
    s->prober = NewNvmlProber();
  }
  s->deps.resolver = s->resolver.get();
  s->deps.prober = s->prober.get();
  if (c.options.verify != core::Level::kLoadTest) return;
  s->deps.check_packages = AotiPackageCheck();
  auto l = NewCudaModuleLoader();
  if (!l.ok()) {
    std::cerr << "initwarm wait: LoadTest unavailable: " << l.status().message() << "\n";
    return;
  }
  s->loader = std::move(*l);
  s->deps.load_cubin = [loader = s->loader.get()](std::string_view image, std::string_view name) {
    return loader->LoadCubin(image, name);
  };
}

// The gate report on stdout and in the termination log, then the outcome
// on stderr; returns the exit code.
int ReportWait(const FlagSet& f, const WaitFlags& flags, const WaitOptions& o,
               const StatusOr<WaitResult>& r, const core::GateReport& report) {
  const std::string report_json = core::GateReportToJson(report);
  std::cout << report_json << "\n";
  WriteTerminationMessage(f, flags.termination_log, report_json);
  if (!r.ok()) {
    PrintError("wait", r.status());
    return WaitExitCode(r.status());
  }
  std::cerr << "initwarm wait: "
            << (r->outcome == core::GateOutcome::kWarm ? "view ready: " : "starting cold: ")
            << o.view.string() << " -> " << r->target.string() << " (" << r->reason << ")\n";
  return core::kExitOk;
}

}  // namespace

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
  WaitFlags flags;
  AddWaitFlags(&f, &flags);
  if (int rc = ParseOrExit("wait", &f, args); rc >= 0) return rc;
  auto command = DecodeWaitFlags(flags);
  if (!command.ok()) {
    PrintError("wait", command.status());
    return core::kExitUsage;
  }
  WaitServices services;
  BuildWaitServices(*command, &services);
  // The webhook's parity finding (the pod's annotation): said at the start,
  // where a slow first request will be looked for, and in the report.
  const char* parity = std::getenv(core::gate_env::kParity);
  if (parity != nullptr && *parity != '\0') {
    std::cerr << "initwarm wait: parity: this pod differs from what was warmed, so it compiles "
                 "what the cache lacks: "
              << parity << "\n";
  }
  core::GateReport report;
  auto r = Wait(command->options, services.deps, &report);
  if (parity != nullptr) report.parity = parity;
  return ReportWait(f, flags, command->options, r, report);
}

}  // namespace kc::initwarm
