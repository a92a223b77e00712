// `initwarm misses`: the runtime misses of a gated pod's view.
#include <chrono>
#include <iostream>
#include <map>
#include <thread>
#include <utility>

#include "api/quantity.h"
#include "core/exit_codes.h"
#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/miss_channel.h"
#include "core/miss_report.h"
#include "core/resolve_answer.h"
#include "initwarm/cmd_common.h"
#include "initwarm/commands.h"
#include "initwarm/miss_inbox.h"
#include "initwarm/miss_sender.h"
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

constexpr int kMissTriesAtOnce = 4;

// What the report says of the pod's inbox list; none before a first copy.
std::optional<core::HarvestListRef> HarvestRef(const InboxState& s) {
  if (s.copied.empty()) return std::nullopt;
  return core::RefOf(s.copied);
}

// Sends the report when SendDue says so, printing what came of it (a
// failure is a log line; the next try waits for its backoff).
Status Report(const std::string& url, const std::string& token_file, const core::MissReport& report,
              MissSendState* state) {
  const std::string json = core::MissReportToJson(report);
  const auto now = MissClock::now();
  if (!SendDue(*state, report, json, now)) return OkStatus();
  auto token = ReadMissToken(token_file);
  StatusOr<core::MissReportAnswer> answer = token.status();
  // Only the leader replica accepts a report (another answers 503), and each
  // try is a new connection the Service may send to any replica: a few tries
  // at once before the backoff.
  for (int attempt = 0; token.ok() && attempt < kMissTriesAtOnce; ++attempt) {
    answer = SendMissReport(url, *token, report, std::chrono::seconds(10));
    if (answer.ok() || answer.status().code() != StatusCode::kUnavailable) break;
  }
  *state = AfterSend(std::move(*state), answer.ok(), json, now);
  if (!answer.ok()) {
    std::cout << "initwarm misses: report not sent: " << answer.status().message()
              << "; next try in " << state->backoff.count() << "s" << std::endl;
    return answer.status();
  }
  std::cout << "initwarm misses: reported " << answer->accepted << " misses (" << answer->fresh
            << " new";
  if (answer->dropped > 0) std::cout << ", " << answer->dropped << " over the operator's caps";
  std::cout << ")" << std::endl;
  return OkStatus();
}

}  // namespace

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
  f.String("view", &view, "the gate's view symlink");
  f.String("fingerprint", &fingerprint,
           "the view's fingerprint id, for --json and reports (default: from the view's tree "
           "name)");
  f.Bool("json", &json, "print the miss report as JSON");
  f.Duration("interval", &interval, kInitwarmDurations,
             "watch: look again after this long, forever (0: once)");
  f.String("report-url", &report_url,
           "the operator's base URL (the gate's --resolve-url): send the miss report there");
  f.String("token-file", &token_file, "the projected ServiceAccount token, for --report-url");
  std::string inbox;
  std::string pod_uid;
  int harvest_max_files = static_cast<int>(core::kDefaultHarvestMaxFilesPerPod);
  std::string harvest_max_bytes(core::kDefaultHarvestMaxBytesPerPod);
  f.String("inbox", &inbox,
           "the cache volume's inbox root (v1/.inbox), mounted writable on its own: copy what "
           "the pod compiled into it for the harvest (needs --pod-uid)");
  f.String("pod-uid", &pod_uid, "this pod's uid (names its inbox directory)").Env("KC_POD_UID");
  f.Int("harvest-max-files", &harvest_max_files, 1, core::kMaxHarvestFilesPerPod,
        "files copied into the inbox at most");
  f.String("harvest-max-bytes", &harvest_max_bytes, "bytes copied into the inbox at most");
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
  std::map<std::pair<core::MissFramework, std::string>, core::RuntimeMiss> seen;
  MissSendState sending;
  InboxState harvested;
  for (;;) {
    auto scan = ScanView(view);
    StatusOr<std::vector<core::RuntimeMiss>> misses = scan.status();
    if (scan.ok()) misses = MissesOf(*scan);
    if (!misses.ok()) {
      PrintError("misses", misses.status());
      if (interval.count() == 0) return core::kExitError;
    } else {
      const std::string fp = fingerprint.empty() ? FingerprintOfTree(view) : fingerprint;
      if (!inbox.empty() && core::IsFingerprintId(fp)) {
        const auto dir = core::Layout::InboxOfUnder(inbox, fp, pod_uid);
        // Once (the pod's processes are done): every file has settled.
        if (interval.count() == 0) {
          for (const NewEntry& e : scan->entries) harvested.last_sizes[e.path] = e.size;
        }
        for (const std::string& line :
             UpdateInbox(*scan, dir, harvest_max_files, max_bytes, &harvested)) {
          (json ? std::cerr : std::cout) << "initwarm misses: " << line << std::endl;
        }
      }
      if (json) {
        std::cout << core::MissReportToJson({fp, *misses, HarvestRef(harvested)}) << "\n";
      } else {
        PrintNew(*misses, &seen);
        if (interval.count() == 0 && misses->empty()) {
          std::cout << "initwarm misses: none: nothing was compiled after the gate\n";
        }
      }
      if (!report_url.empty()) {
        Status sent =
            Report(report_url, token_file, {fp, *misses, HarvestRef(harvested)}, &sending);
        if (!sent.ok() && interval.count() == 0) return core::kExitError;
      }
    }
    if (interval.count() == 0) return core::kExitOk;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace kc::initwarm
