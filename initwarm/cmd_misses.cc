// `initwarm misses`: the runtime misses of a gated pod's view.
#include <chrono>
#include <iostream>
#include <map>
#include <thread>
#include <utility>

#include "core/exit_codes.h"
#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/miss_report.h"
#include "initwarm/cmd_common.h"
#include "initwarm/commands.h"
#include "initwarm/misses.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;

// The fingerprint in a tree's name (layered-<fp>-<rand>, copy-<fp>-<rand>);
// "" for the cold tree.
std::string FingerprintOfTree(const fs::path& view) {
  std::error_code ec;
  const std::string name = fs::read_symlink(view, ec).filename().string();
  const std::size_t dash = name.find('-');
  if (ec || dash == std::string::npos) return "";
  const std::string fp = name.substr(dash + 1, 16);
  return core::IsFingerprintId(fp) ? fp : "";
}

// Prints one line per miss not printed before, or grown since.
void PrintNew(const std::vector<core::RuntimeMiss>& misses,
              std::map<std::pair<core::MissFramework, std::string>, core::RuntimeMiss>* seen) {
  for (const auto& m : misses) {
    auto [it, added] = seen->try_emplace({m.framework, m.key}, m);
    if (!added && it->second == m) continue;
    it->second = m;
    std::cout << "initwarm misses: " << core::MissLine(m) << std::endl;
  }
}

}  // namespace

int RunMisses(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("misses"),
            "Lists what serving processes compiled into a gated pod's cache view after its gate "
            "(runtime misses): one line per compiled thing, named per framework (a Triton "
            "kernel by its name, num_warps, num_stages and argument types). --json prints the "
            "miss report instead. With --interval it keeps watching, printing each new or grown "
            "miss once (a sidecar's log).\n\n"
            "exit codes: 0 done; 2 bad flags; 1 the view cannot be read.");
  std::string view(core::kDefaultView);
  std::string fingerprint;
  bool json = false;
  std::chrono::seconds interval{0};
  f.String("view", &view, "the gate's view symlink");
  f.String("fingerprint", &fingerprint,
           "the view's fingerprint id, for --json (default: from the view's tree name)");
  f.Bool("json", &json, "print the miss report as JSON");
  f.Duration("interval", &interval, kInitwarmDurations,
             "watch: look again after this long, forever (0: once)");
  if (int rc = ParseOrExit("misses", &f, args); rc >= 0) return rc;
  if (json && interval.count() > 0) {
    PrintError("misses", InvalidArgumentError("--json and --interval: choose one"));
    return core::kExitUsage;
  }
  std::map<std::pair<core::MissFramework, std::string>, core::RuntimeMiss> seen;
  for (;;) {
    auto misses = ViewMisses(view);
    if (!misses.ok()) {
      PrintError("misses", misses.status());
      if (interval.count() == 0) return core::kExitError;
    } else if (json) {
      if (fingerprint.empty()) fingerprint = FingerprintOfTree(view);
      std::cout << core::MissReportToJson({fingerprint, *misses}) << "\n";
    } else {
      PrintNew(*misses, &seen);
      if (interval.count() == 0 && misses->empty()) {
        std::cout << "initwarm misses: none: nothing was compiled after the gate\n";
      }
    }
    if (interval.count() == 0) return core::kExitOk;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace kc::initwarm
