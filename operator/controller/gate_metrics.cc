#include "operator/controller/gate_metrics.h"

#include <algorithm>

namespace kc::op {

GateRunId GateRunOf(const GateReportView& report) {
  return {report.pod_uid, report.container_id, report.finished};
}

GateTally TallyGateRuns(const std::vector<GateReportView>& reports,
                        const std::set<GateRunId>& counted,
                        const std::map<std::string, double>& warmup_seconds, Time since) {
  GateTally t;
  for (const GateReportView& r : reports) {
    GateRunId id = GateRunOf(r);
    const bool seen = counted.count(id) > 0 || t.counted.count(id) > 0;
    const bool before_since = r.finished.has_value() && *r.finished < since;
    t.counted.insert(std::move(id));
    if (seen || before_since) continue;
    ++t.add.outcomes[r.report.outcome];
    t.add.waits.push_back(static_cast<double>(std::max<int64_t>(r.report.waited_ms, 0)) / 1000.0);
    if (r.report.outcome != core::GateOutcome::kWarm) continue;
    if (auto s = warmup_seconds.find(r.report.fingerprint); s != warmup_seconds.end()) {
      t.add.saved[s->first] += s->second;
    }
  }
  return t;
}

std::map<std::string, double> WarmupSecondsByFingerprint(
    const std::vector<core::FingerprintStatus>& fingerprints, const std::vector<PodView>& pods,
    const std::map<std::string, double>& before) {
  std::map<std::string, double> out;
  for (const core::FingerprintStatus& f : fingerprints) {
    auto pod = std::find_if(pods.begin(), pods.end(), [&](const PodView& p) {
      return !f.job.empty() && p.job_name == f.job && p.phase == "Succeeded" &&
             p.warmup_seconds.has_value();
    });
    if (pod != pods.end()) {
      out[f.id] = *pod->warmup_seconds;
    } else if (auto b = before.find(f.id); b != before.end()) {
      out[f.id] = b->second;
    }
  }
  return out;
}

}  // namespace kc::op
