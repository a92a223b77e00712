#include "initwarm/misses/miss_watch.h"

#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/exit_codes.h"
#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/miss_report.h"
#include "initwarm/misses/miss_inbox.h"
#include "initwarm/misses/misses.h"
#include "initwarm/net/miss_sender.h"

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

int WatchMisses(const MissWatchOptions& o) {
  std::map<std::pair<core::MissFramework, std::string>, core::RuntimeMiss> seen;
  MissSendState sending;
  InboxState harvested;
  for (;;) {
    auto scan = ScanView(o.view);
    StatusOr<std::vector<core::RuntimeMiss>> misses = scan.status();
    if (scan.ok()) misses = MissesOf(*scan);
    if (!misses.ok()) {
      std::cerr << "initwarm misses: " << misses.status().ToString() << "\n";
      if (o.interval.count() == 0) return core::kExitError;
    } else {
      const std::string fp = o.fingerprint.empty() ? FingerprintOfTree(o.view) : o.fingerprint;
      if (!o.inbox.empty() && core::IsFingerprintId(fp)) {
        const auto dir = core::Layout::InboxOfUnder(o.inbox, fp, o.pod_uid);
        // Once (the pod's processes are done): every file has settled.
        if (o.interval.count() == 0) {
          for (const NewEntry& e : scan->entries) harvested.last_sizes[e.path] = e.size;
        }
        for (const std::string& line :
             UpdateInbox(*scan, dir, o.harvest_max_files, o.harvest_max_bytes, &harvested)) {
          (o.json ? std::cerr : std::cout) << "initwarm misses: " << line << std::endl;
        }
      }
      if (o.json) {
        std::cout << core::MissReportToJson({fp, *misses, HarvestRef(harvested)}) << "\n";
      } else {
        PrintNew(*misses, &seen);
        if (o.interval.count() == 0 && misses->empty()) {
          std::cout << "initwarm misses: none: nothing was compiled after the gate\n";
        }
      }
      if (!o.report_url.empty()) {
        Status sent =
            Report(o.report_url, o.token_file, {fp, *misses, HarvestRef(harvested)}, &sending);
        if (!sent.ok() && o.interval.count() == 0) return core::kExitError;
      }
    }
    if (o.interval.count() == 0) return core::kExitOk;
    std::this_thread::sleep_for(o.interval);
  }
}

}  // namespace kc::initwarm
