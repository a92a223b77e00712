// `initwarm misses`: the runtime misses of a gated pod's view. The shell:
// flags in, initwarm/misses/miss_watch.h's WatchMisses out.
#include <chrono>

#include "api/quantity.h"
#include "core/exit_codes.h"
#include "core/harvest.h"
#include "core/job_args.h"
#include "core/layout.h"
#include "core/miss_channel.h"
#include "core/resolve_answer.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/misses/miss_watch.h"

namespace kc::initwarm {

int RunMisses(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("misses"),
            "Lists what serving processes compiled into a gated pod's cache view after its gate "
            "(runtime misses): one line per compiled thing, named per framework (a Triton "
            "kernel by its name, num_warps, num_stages and argument types). --json prints the "
            "miss report instead. With --interval it keeps watching, printing each new or grown "
            "miss once (a sidecar's log). With --report-url it also sends the pod's miss report "
            "to the operator (POST <url>/v1/misses, authenticated by the pod's projected "
            "ServiceAccount token in --token-file) when it changes and every 5 minutes; a "
            "failed report is retried with backoff and never stops the watch. With --inbox "
            "(spec.harvest.mode Merge) it also copies each file compiled after the gate, once "
            "it has kept its size for one interval (without --interval: at once, the pod's "
            "processes being done), into <inbox>/<fingerprint>/<pod uid>/ (--inbox: the "
            "volume's inbox root v1/.inbox, mounted on its own), writes their list there "
            "(.list.json) and names "
            "it in the report (and in --json's \"harvest\": files, bytes, sha256), for "
            "`initwarm harvest`.\n\n"
            "exit codes: 0 done; 2 bad flags; 1 the view cannot be read (once: or the report "
            "could not be sent).");
  std::string view(core::kDefaultView);
  std::string fingerprint;
  std::string report_url;
  std::string token_file(core::kMissTokenFile);
  bool json = false;
  std::chrono::seconds interval{0};
  f.String(core::misses_flag::kView, &view, "the gate's view symlink");
  f.String(core::misses_flag::kFingerprint, &fingerprint,
           "the view's fingerprint id, for --json and reports (default: from the view's tree "
           "name)");
  f.Bool(core::misses_flag::kJson, &json, "print the miss report as JSON");
  f.Duration(core::misses_flag::kInterval, &interval, kInitwarmDurations,
             "watch: look again after this long, forever (0: once)");
  f.String(core::misses_flag::kReportUrl, &report_url,
           "the operator's base URL (the gate's --resolve-url): send the miss report there");
  f.String(core::misses_flag::kTokenFile, &token_file,
           "the projected ServiceAccount token, for --report-url");
  std::string inbox;
  std::string pod_uid;
  int harvest_max_files = static_cast<int>(core::kDefaultHarvestMaxFilesPerPod);
  std::string harvest_max_bytes(core::kDefaultHarvestMaxBytesPerPod);
  f.String(core::misses_flag::kInbox, &inbox,
           "the cache volume's inbox root (v1/.inbox), mounted writable on its own: copy what "
           "the pod compiled into it for the harvest (needs --pod-uid)");
  f.String(core::misses_flag::kPodUid, &pod_uid, "this pod's uid (names its inbox directory)")
      .Env("KC_POD_UID");
  f.Int(core::misses_flag::kHarvestMaxFiles, &harvest_max_files, 1, core::kMaxHarvestFilesPerPod,
        "files copied into the inbox at most");
  f.String(core::misses_flag::kHarvestMaxBytes, &harvest_max_bytes,
           "bytes copied into the inbox at most");
  if (int rc = ParseOrExit("misses", &f, args); rc >= 0) return rc;
  if (json && interval.count() > 0) {
    PrintError("misses", InvalidArgumentError("--json and --interval: choose one"));
    return core::kExitUsage;
  }
  if (!report_url.empty()) {
    if (auto u = core::ParseResolveUrl(report_url); !u.ok()) {
      PrintError("misses", u.status().WithContext("--report-url"));
      return core::kExitUsage;
    }
  }
  std::int64_t max_bytes = 0;
  if (!inbox.empty()) {
    auto b = api::ParseQuantityBytes(harvest_max_bytes);
    Status bad = !b.ok()  ? b.status().WithContext("--harvest-max-bytes")
                 : *b < 1 ? InvalidArgumentError("--harvest-max-bytes: must be at least 1 byte")
                 : !core::IsSafeUid(pod_uid)
                     ? InvalidArgumentError("--inbox needs --pod-uid (or $KC_POD_UID): \"" +
                                            pod_uid + "\" is not a pod uid")
                     : OkStatus();
    if (!bad.ok()) {
      PrintError("misses", bad);
      return core::kExitUsage;
    }
    max_bytes = *b;
  }
  MissWatchOptions o;
  o.view = view;
  o.fingerprint = fingerprint;
  o.report_url = report_url;
  o.token_file = token_file;
  o.json = json;
  o.interval = interval;
  o.inbox = inbox;
  o.pod_uid = pod_uid;
  o.harvest_max_files = harvest_max_files;
  o.harvest_max_bytes = max_bytes;
  return WatchMisses(o);
}

}  // namespace kc::initwarm
