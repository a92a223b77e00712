// Gate metrics: what the gate reports of one KernelCache's gated pods
// (operator/controller/gate_reports.h) add to the operator's gate series
// (operator/serving/metrics.h), each gate run counted once:
//
//   kernelcache_gate_outcomes_total{outcome}   +1 per run (Warm, Cold, Failed)
//   kernelcache_gate_wait_seconds               the run's waitedMs / 1000
//   kernelcache_compile_seconds_saved_total{fingerprint}
//                                               a Warm run: the warmup seconds
//                                               of its fingerprint
//
// A gate run is one terminated `kernelcache-wait` container of one pod,
// named by GateRunId: the pod's uid, the run's container id (the kubelet
// gives every run its own, and a run keeps it when a restarted gate moves
// its report from state to lastState) and its finishedAt (which still
// tells runs apart should the container id be missing). So passes that see
// the same pods again (a relist, a resync, any other event) add nothing.
//
// The compile seconds a Warm pod did not spend are an estimate: the run
// time of the `warmup` container of the Job that sealed its fingerprint's
// cache (PodView::warmup_seconds: whole seconds, and the warmup program's
// start and model load count too).
// Pure: no I/O.
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/api_types.h"
#include "core/gate_report.h"
#include "operator/decide/types.h"

namespace kc::op {

struct GateRunId {
  std::string pod_uid;
  std::string container_id;
  std::optional<Time> finished;
  auto operator<=>(const GateRunId&) const = default;
};

GateRunId GateRunOf(const GateReportView& report);

// What a set of gate runs adds to the gate series of their KernelCache.
struct GateIncrements {
  std::map<core::GateOutcome, int> outcomes;  // runs by outcome
  std::vector<double> waits;                  // seconds waited, one per run
  std::map<std::string, double> saved;        // fingerprint -> compile seconds
  friend bool operator==(const GateIncrements&, const GateIncrements&) = default;
};

struct GateTally {
  GateIncrements add;
  // Every run of the reports, all counted now: the next pass's `counted`
  // (runs of pods that are gone drop out, so it never outgrows the pods).
  std::set<GateRunId> counted;
};

// The runs of `reports` (one KernelCache's) not in `counted`. A run that
// finished before `since` is taken as counted without adding anything: an
// operator that starts leading does not count again what the replica
// before it counted (a run with no finishedAt counts). `warmup_seconds`:
// WarmupSecondsByFingerprint; a Warm run of a fingerprint not in it adds
// nothing to `saved`. A negative waitedMs counts as 0.
GateTally TallyGateRuns(const std::vector<GateReportView>& reports,
                        const std::set<GateRunId>& counted,
                        const std::map<std::string, double>& warmup_seconds, Time since);

// Fingerprint id -> the warmup seconds of the Job its status entry records
// (status.fingerprints[].job): those of a Succeeded pod of that Job, else
// what `before` (the last pass's answer) knew, so a fingerprint whose
// warmup pod is gone keeps its seconds. Only fingerprints of `fingerprints`.
std::map<std::string, double> WarmupSecondsByFingerprint(
    const std::vector<core::FingerprintStatus>& fingerprints, const std::vector<PodView>& pods,
    const std::map<std::string, double>& before);

}  // namespace kc::op
