// `initwarm gc` and `initwarm inspect`.
#include <iostream>

#include "initwarm/cmd_common.h"
#include "initwarm/commands.h"
#include "initwarm/exit_codes.h"
#include "initwarm/fsutil.h"
#include "initwarm/gc.h"
#include "initwarm/inspect.h"

namespace kc::initwarm {

int RunGc(const std::vector<std::string>& args) {
  Flags f("gc",
          "Removes only what it is asked to remove (a volume may be shared by several "
          "KernelCaches). --remove <fingerprint>:<manifest digest> removes that published "
          "cache while its READY still holds that digest (never one sealed since), under the "
          "fingerprint lock; with --remove, only the named fingerprints' staging (older than "
          "--staging-max-age, no live writer), quarantine (older than --quarantine-max-age) "
          "and dead locks go too. Without --remove, only such leftovers are removed, volume "
          "wide, and no published cache. --keep protects fingerprints. --dry-run lists only.\n\n"
          "exit codes: 0 done; 2 bad flags; 1 a removal failed or was skipped because a live "
          "writer holds the fingerprint (the rest were still tried; retry later).");
  AddRootFlag(&f);
  f.Repeated("remove",
             "<fingerprint>[:<manifest digest>] to remove; without the digest only its "
             "leftovers (staging, quarantine, dead lock) go");
  f.Repeated("keep", "fingerprint ids never to touch");
  f.String("staging-max-age", "24h", "remove staging directories older than this");
  f.String("quarantine-max-age", "0s", "remove quarantine directories older than this");
  f.String("lock-stale-after", "2h", "a lock older than this is dead");
  f.Bool("dry-run", "list what would be removed, remove nothing");
  if (int rc = ParseOrExit(&f, args); rc >= 0) return rc;
  GcPolicy p;
  for (const auto& k : f.GetAll("keep")) {
    if (!core::IsFingerprintId(k)) {
      PrintError("gc", InvalidArgumentError("--keep \"" + k + "\" is not a fingerprint id"));
      return kExitUsage;
    }
    p.keep.insert(k);
  }
  for (const auto& r : f.GetAll("remove")) {
    if (Status s = ParseRemoveSpec(r, &p.remove); !s.ok()) {
      PrintError("gc", s);
      return kExitUsage;
    }
    if (p.keep.count(r.substr(0, r.find(':'))) > 0) {
      PrintError("gc",
                 InvalidArgumentError("--remove " + r + " names a fingerprint also in --keep"));
      return kExitUsage;
    }
  }
  p.scoped = f.IsSet("remove");
  for (const char* n : {"staging-max-age", "quarantine-max-age", "lock-stale-after"}) {
    if (auto v = f.GetSeconds(n); !v.ok()) {
      PrintError("gc", v.status());
      return kExitUsage;
    }
  }
  p.staging_max_age_s = *f.GetSeconds("staging-max-age");
  p.quarantine_max_age_s = *f.GetSeconds("quarantine-max-age");
  p.now = NowSeconds();
  core::Layout layout(f.Get("root"));
  auto entries = ScanVolume(layout, *f.GetSeconds("lock-stale-after"));
  if (!entries.ok()) {
    PrintError("gc", entries.status());
    return kExitError;
  }
  auto plan = PlanGc(*entries, p);
  const bool dry = f.GetBool("dry-run");
  int removed = 0;
  for (const auto& d : plan) {
    std::cout << (d.remove ? (dry ? "would remove " : "remove ") : "keep ") << d.entry.path.string()
              << ": " << d.why << "\n";
    removed += d.remove ? 1 : 0;
  }
  std::cout << (dry ? "dry run: " : "") << removed << " of " << plan.size() << " entries "
            << (dry ? "would be " : "") << "removed\n";
  if (dry) return kExitOk;
  Status s = ApplyGc(layout, plan, *f.GetSeconds("lock-stale-after"));
  if (!s.ok()) {
    PrintError("gc", s);
    return kExitError;
  }
  return kExitOk;
}

int RunInspect(const std::vector<std::string>& args) {
  Flags f("inspect",
          "Summarises a cache volume: fingerprints (READY or not), files and bytes, counts by "
          "framework directory, Triton kernels, versions, age; staging and quarantine.\n\n"
          "exit codes: 0 done; 2 bad flags; 1 the volume cannot be read.");
  AddRootFlag(&f);
  f.Bool("json", "print a JSON array instead");
  if (int rc = ParseOrExit(&f, args); rc >= 0) return rc;
  auto s = InspectVolume(core::Layout(f.Get("root")), NowSeconds());
  if (!s.ok()) {
    PrintError("inspect", s.status());
    return kExitError;
  }
  std::cout << (f.GetBool("json") ? SummariesJson(*s) + "\n" : FormatSummaries(*s));
  return kExitOk;
}

}  // namespace kc::initwarm
