// Metrics: a small Prometheus registry (counters, gauges, histograms with
// labels) rendered in the text exposition format 0.0.4, and the operator's
// metric set on top of it.
//
// Names follow controller-runtime where one exists, so existing dashboards
// work: controller_runtime_reconcile_total{controller,result},
// controller_runtime_reconcile_errors_total{controller},
// controller_runtime_reconcile_time_seconds{controller} (histogram),
// workqueue_depth{name}, workqueue_adds_total{name},
// workqueue_retries_total{name}, leader_election_master_status{name}.
// KernelCache's own: kernelcache_fingerprints{namespace,kernelcache,state},
// kernelcache_cache_bytes{namespace,kernelcache},
// kernelcache_cache_files{namespace,kernelcache},
// kernelcache_warmup_duration_seconds{outcome} (histogram),
// kernelcache_enqueues_total{source},
// kernelcache_time_to_ready_seconds (histogram: a fingerprint's first
// appearance to its cache being Ready); from the gated pods' gate reports,
// each gate run once: kernelcache_gate_outcomes_total{namespace,kernelcache,
// outcome}, kernelcache_gate_wait_seconds{namespace,kernelcache}
// (histogram), kernelcache_compile_seconds_saved_total{namespace,
// kernelcache,fingerprint} (an estimate). Labels are bounded: no pod names.
//
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gate_report.h"

namespace kc::op {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class MetricsRegistry {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  // Declares a family. Histograms need ascending upper bounds (+Inf added).
  void Declare(const std::string& name, Type type, const std::string& help,
               std::vector<double> buckets = {});

  void Add(const std::string& name, const MetricLabels& labels, double delta = 1);
  void Set(const std::string& name, const MetricLabels& labels, double value);
  void Observe(const std::string& name, const MetricLabels& labels, double value);
  // Removes every series of `name` whose labels include all of `match`.
  void Remove(const std::string& name, const MetricLabels& match);
  // The value of a counter or gauge series (0 when absent); for tests.
  double Value(const std::string& name, const MetricLabels& labels) const;
  // The observation count of a histogram series; for tests.
  uint64_t Count(const std::string& name, const MetricLabels& labels) const;

  // Text exposition format (Content-Type: text/plain; version=0.0.4).
  std::string Render() const;

 private:
  struct Series {
    double value = 0;                     // counter / gauge
    std::vector<uint64_t> bucket_counts;  // histogram, non-cumulative
    double sum = 0;
    uint64_t count = 0;
  };
  struct Family {
    Type type = Type::kCounter;
    std::string help;
    std::vector<double> buckets;
    std::map<MetricLabels, Series> series;
  };
  Family* Find(const std::string& name, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

// The operator's metrics; one per process.
class OperatorMetrics {
 public:
  OperatorMetrics();

  MetricsRegistry& registry() { return registry_; }

  // result: "success" | "error" | "requeue" | "requeue_after".
  void ObserveReconcile(const std::string& controller, const std::string& result, double seconds);
  void SetQueueDepth(const std::string& queue, int depth);
  void CountQueueAdd(const std::string& queue);
  // kernelcache_enqueues_total{source}: what asked for a reconcile
  // (kernelcache, job, pod, gate, pvc, node, start).
  void CountEnqueue(const char* source);
  void CountQueueRetry(const std::string& queue);
  // rest_client_rate_limiter_duration_seconds{client,verb}, as client-go
  // names it: how long a request of `client` ("api", "events" or "reviews") waited for
  // its rate limiter's token (0 when it did not), each attempt once.
  void ObserveRateLimiterWait(const std::string& client, const std::string& verb, double seconds);
  void SetLeader(const std::string& lease, bool leader);
  // Replaces the per-KernelCache gauges. `by_state` counts fingerprints.
  // The KernelCache's gate outcome counters start at 0 here, so the first
  // gate run is an increase.
  void SetKernelCache(const std::string& ns, const std::string& name,
                      const std::map<std::string, int>& by_state, double bytes, double files);
  // Removes every series of the KernelCache, the gate series included.
  void ForgetKernelCache(const std::string& ns, const std::string& name);
  // Gate runs of the KernelCache's gated pods (core/gate_report.h), each
  // counted once by the reconciler (operator/controller/gate_metrics.h).
  void CountGateOutcome(const std::string& ns, const std::string& name, core::GateOutcome outcome,
                        int runs = 1);
  void ObserveGateWait(const std::string& ns, const std::string& name, double seconds);
  // The compile seconds a Warm gate run of `fingerprint` saved (an estimate).
  void AddCompileSecondsSaved(const std::string& ns, const std::string& name,
                              const std::string& fingerprint, double seconds);
  // Removes the fingerprint's compile-seconds-saved series (it left the status).
  void ForgetFingerprint(const std::string& ns, const std::string& name,
                         const std::string& fingerprint);
  // kernelcache_runtime_misses_total: `misses` entries a gated pod compiled
  // after its gate that it had not reported before (the miss channel).
  void CountRuntimeMisses(const std::string& ns, const std::string& name,
                          const std::string& fingerprint, std::string_view framework, int misses);
  // kernelcache_miss_reports_total{code}: what /v1/misses answered.
  void CountMissReport(int http_status);
  // kernelcache_parity_mismatches_total: a gated pod admitted that differs
  // from what its KernelCache warmed (webhook/parity.h).
  void CountParityMismatch(const std::string& ns, const std::string& name);
  // outcome: "Published" | "Failed" | "Mismatch".
  void ObserveWarmup(const std::string& outcome, double seconds);
  void ObserveTimeToReady(double seconds);

  std::string Render() const { return registry_.Render(); }

 private:
  MetricsRegistry registry_;
};

}  // namespace kc::op
