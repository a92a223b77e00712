#include "operator/decide/decide_harvest.h"

#include <algorithm>

#include "base/strings.h"
#include "base/utf8.h"
#include "core/harvest_report.h"
#include "core/spec_sections.h"
#include "operator/decide/names.h"
#include "operator/decide/warmup_job.h"

namespace kc::op::decide {
namespace {

namespace st = core::fp_state;

// The result message of the Job's newest pod that has one.
std::optional<std::string> ResultOf(const JobView& j, const std::vector<PodView>& pods) {
  const PodView* best = nullptr;
  for (const auto& p : pods) {
    if (!OfJob(p, j) || !p.seal_message || p.seal_message->empty()) continue;
    if (best == nullptr || p.created > best->created) best = &p;
  }
  if (best == nullptr) return std::nullopt;
  return best->seal_message;
}

bool Running(const JobView& j) { return !j.complete && !j.failed_condition && !j.deleting; }

std::string Short(const std::string& digest) { return digest.substr(0, 12); }

// Records a finished Job's result into `f`; the Events it calls for.
void Record(const JobView& j, const std::vector<PodView>& pods, core::FingerprintStatus& f,
            Effects& e, Time now) {
  core::HarvestStatus h = f.harvest.value_or(core::HarvestStatus{});
  h.job = j.name;
  h.job_uid = j.uid;
  h.last_time = std::chrono::time_point_cast<seconds>(j.finished.value_or(now));
  h.added_files = h.added_bytes = h.conflicts = h.rejected = 0;
  h.added.clear();
  h.message.clear();
  const auto message = ResultOf(j, pods);
  auto report = message ? core::ParseHarvestReport(*message)
                        : StatusOr<core::HarvestReport>(
                              FailedPreconditionError("the harvest pod left no result"));
  const std::string what = "harvest Job " + j.name + " (fingerprint " + f.id + ")";
  if (!report.ok() || report->outcome == core::HarvestOutcome::kFailed) {
    h.last_result = core::HarvestOutcome::kFailed;
    h.message = report.ok()                 ? report->reason + ": " + report->message
                : !j.failure_reason.empty() ? j.failure_reason + ": " + j.failure_message
                                            : report.status().message();
    h.message = TruncateUtf8(h.message, 1000);
    e.Event("Warning", "HarvestFailed",
            what + " failed: " + h.message + "; the previous generation still serves");
    f.harvest = std::move(h);
    return;
  }
  h.base_digest = report->base_digest;
  h.conflicts = report->conflict_count;
  h.rejected = report->rejected_count;
  if (!report->conflicts.empty()) {
    h.message = "conflict: " + report->conflicts[0];
  } else if (!report->rejected.empty()) {
    h.message = "rejected: " + report->rejected[0];
  }
  h.message = TruncateUtf8(h.message, 1000);
  if (report->outcome == core::HarvestOutcome::kMerged &&
      report->base_digest == f.manifest_digest) {
    h.last_result = core::HarvestOutcome::kMerged;
    h.generation += 1;
    h.added_files = report->added_files;
    h.added_bytes = report->added_bytes;
    h.added = report->added_entries;
    f.manifest_digest = report->manifest_digest;
    f.bytes = report->bytes;
    f.files = report->files;
    e.Event("Normal", "HarvestMerged",
            what + " merged " + std::to_string(report->added_files) + " file(s) (" +
                api::FormatBytes(report->added_bytes) + ") from " + std::to_string(report->pods) +
                " pod(s): generation " + std::to_string(h.generation) + ", manifest digest " +
                Short(report->manifest_digest) + "; added " + StrJoin(report->added_entries, ", "));
  } else {
    // Unchanged, or merged into a generation the status no longer names
    // (re-warmed since): the status's cache stands.
    h.last_result = core::HarvestOutcome::kUnchanged;
  }
  if (h.conflicts > 0 || h.rejected > 0) {
    e.Event("Warning", "HarvestKeptOut",
            what + " kept out " + std::to_string(h.conflicts) + " conflicting and " +
                std::to_string(h.rejected) + " rejected file(s); " + h.message);
  }
  f.harvest = std::move(h);
}

}  // namespace

std::vector<core::HarvestPod> AcceptList(const std::vector<core::HarvestPod>& pods,
                                         const core::HarvestCaps& caps) {
  std::vector<core::HarvestPod> sorted = pods;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.uid < b.uid; });
  std::vector<core::HarvestPod> out;
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  for (const auto& p : sorted) {
    if (out.size() == core::kMaxHarvestPods) break;
    if (p.list.files == 0 || p.list.files > static_cast<std::uint64_t>(caps.max_files_per_pod) ||
        p.list.bytes > static_cast<std::uint64_t>(caps.max_bytes_per_pod) ||
        files + p.list.files > static_cast<std::uint64_t>(caps.max_files_per_fingerprint) ||
        bytes + p.list.bytes > static_cast<std::uint64_t>(caps.max_bytes_per_fingerprint)) {
      continue;
    }
    files += p.list.files;
    bytes += p.list.bytes;
    out.push_back(p);
  }
  return out;
}

HarvestVerdict DecideHarvest(Entries entries, const core::KernelCache& kc,
                             const std::vector<JobView>& jobs, const std::vector<PodView>& pods,
                             const std::map<std::string, ObservedMisses>& observed,
                             const Settings& settings, bool storage_usable, Time now) {
  HarvestVerdict v;
  v.entries = std::move(entries);
  const std::string& kc_name = kc.metadata.name;
  std::set<std::string> busy;  // fingerprints with a harvest or warmup Job running
  for (const auto& j : jobs) {
    if (!Ours(j, kc_name)) continue;
    const std::string fp = JobFingerprint(j);
    if (Component(j) == "warmup") {
      if (Running(j)) busy.insert(fp);
      continue;
    }
    if (Component(j) != "harvest" || j.deleting) continue;
    auto e = v.entries.find(fp);
    if (e == v.entries.end()) {
      v.effects.DeleteJob(j);
      continue;
    }
    if (Running(j)) {
      busy.insert(fp);
      continue;
    }
    core::FingerprintStatus& f = e->second;
    if (f.harvest && f.harvest->job_uid == j.uid) {
      v.effects.DeleteJob(j);  // recorded in a status already written
      continue;
    }
    Record(j, pods, f, v.effects, now);
    busy.insert(fp);  // deleted next pass; nothing new until then
  }

  if (kc.spec.harvest.mode != core::HarvestMode::kMerge || !storage_usable) return v;
  const seconds interval = kc.spec.harvest.interval;
  const core::HarvestCaps caps = core::HarvestCapsOf(kc.spec.harvest);
  for (auto& [id, f] : v.entries) {
    if (f.state != st::kReady || f.manifest_digest.empty() || busy.contains(id)) continue;
    auto o = observed.find(id);
    if (o == observed.end() || o->second.manifest_digest != f.manifest_digest ||
        o->second.harvest.empty()) {
      continue;
    }
    const std::vector<core::HarvestPod> accept = AcceptList(o->second.harvest, caps);
    if (accept.empty()) continue;
    const std::string accept_json = core::HarvestAcceptToJson(accept);
    const std::string name = HarvestJobName(kc_name, id, f.manifest_digest, accept_json);
    if (f.harvest && f.harvest->job == name) continue;  // these files, this generation: done
    if (f.harvest && f.harvest->last_time && now < *f.harvest->last_time + interval) {
      v.effects.WakeAt(*f.harvest->last_time + interval, now);
      continue;
    }
    if (FindJob(jobs, name) != nullptr) continue;
    Action a;
    a.kind = Action::Kind::kCreateJob;
    a.name = name;
    a.object = BuildHarvestJob(kc, id, f.manifest_digest, accept_json, caps, settings);
    std::uint64_t files = 0;
    for (const auto& p : accept) files += p.list.files;
    v.effects.Event("Normal", "HarvestStarted",
                    "harvest Job " + name + " merges up to " + std::to_string(files) +
                        " file(s) that " + std::to_string(accept.size()) +
                        " pod(s) compiled after their gates into fingerprint " + id +
                        " (generation " + Short(f.manifest_digest) + ")");
    v.effects.actions.push_back(std::move(a));
  }
  return v;
}

}  // namespace kc::op::decide
