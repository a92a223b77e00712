#include "operator/serving/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/api_types.h"

namespace kc::op {
namespace {

std::string EscapeLabel(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<int64_t>(v));
  }
  // The shortest text that reads back as `v` (0.005, not 0.0050000000000000001).
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string LabelText(const MetricLabels& labels, const std::string& extra_key = {},
                      const std::string& extra_value = {}) {
  if (labels.empty() && extra_key.empty()) return "";
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) s += ",";
    first = false;
    s += k + "=\"" + EscapeLabel(v) + "\"";
  }
  if (!extra_key.empty()) {
    if (!first) s += ",";
    s += extra_key + "=\"" + EscapeLabel(extra_value) + "\"";
  }
  return s + "}";
}

MetricLabels Sorted(MetricLabels labels) {
  std::sort(labels.begin(), labels.end());
  return labels;
}

const char* TypeName(MetricsRegistry::Type t) {
  switch (t) {
    case MetricsRegistry::Type::kCounter:
      return "counter";
    case MetricsRegistry::Type::kGauge:
      return "gauge";
    case MetricsRegistry::Type::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

void MetricsRegistry::Declare(const std::string& name, Type type, const std::string& help,
                              std::vector<double> buckets) {
  std::lock_guard<std::mutex> l(mu_);
  Family& f = families_[name];
  f.type = type;
  f.help = help;
  f.buckets = std::move(buckets);
}

MetricsRegistry::Family* MetricsRegistry::Find(const std::string& name, Type type) {
  auto it = families_.find(name);
  if (it == families_.end() || it->second.type != type) return nullptr;
  return &it->second;
}

void MetricsRegistry::Add(const std::string& name, const MetricLabels& labels, double delta) {
  std::lock_guard<std::mutex> l(mu_);
  Family* f = Find(name, Type::kCounter);
  if (f == nullptr) f = Find(name, Type::kGauge);
  if (f == nullptr) return;
  f->series[Sorted(labels)].value += delta;
}

void MetricsRegistry::Set(const std::string& name, const MetricLabels& labels, double value) {
  std::lock_guard<std::mutex> l(mu_);
  Family* f = Find(name, Type::kGauge);
  if (f == nullptr) return;
  f->series[Sorted(labels)].value = value;
}

void MetricsRegistry::Observe(const std::string& name, const MetricLabels& labels, double value) {
  std::lock_guard<std::mutex> l(mu_);
  Family* f = Find(name, Type::kHistogram);
  if (f == nullptr) return;
  Series& s = f->series[Sorted(labels)];
  if (s.bucket_counts.size() != f->buckets.size()) s.bucket_counts.assign(f->buckets.size(), 0);
  for (size_t i = 0; i < f->buckets.size(); ++i) {
    if (value <= f->buckets[i]) {
      ++s.bucket_counts[i];
      break;
    }
  }
  s.sum += value;
  ++s.count;
}

void MetricsRegistry::Remove(const std::string& name, const MetricLabels& match) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return;
  auto& series = it->second.series;
  for (auto s = series.begin(); s != series.end();) {
    bool all = std::all_of(match.begin(), match.end(), [&](const auto& kv) {
      return std::find(s->first.begin(), s->first.end(), kv) != s->first.end();
    });
    s = all ? series.erase(s) : std::next(s);
  }
}

double MetricsRegistry::Value(const std::string& name, const MetricLabels& labels) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  auto s = it->second.series.find(Sorted(labels));
  return s == it->second.series.end() ? 0 : s->second.value;
}

uint64_t MetricsRegistry::Count(const std::string& name, const MetricLabels& labels) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  auto s = it->second.series.find(Sorted(labels));
  return s == it->second.series.end() ? 0 : s->second.count;
}

std::string MetricsRegistry::Render() const {
  std::lock_guard<std::mutex> l(mu_);
  std::ostringstream out;
  for (const auto& [name, f] : families_) {
    out << "# HELP " << name << " " << EscapeHelp(f.help) << "\n";
    out << "# TYPE " << name << " " << TypeName(f.type) << "\n";
    for (const auto& [labels, s] : f.series) {
      if (f.type != Type::kHistogram) {
        out << name << LabelText(labels) << " " << FormatValue(s.value) << "\n";
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t i = 0; i < f.buckets.size(); ++i) {
        cumulative += i < s.bucket_counts.size() ? s.bucket_counts[i] : 0;
        out << name << "_bucket" << LabelText(labels, "le", FormatValue(f.buckets[i])) << " "
            << cumulative << "\n";
      }
      out << name << "_bucket" << LabelText(labels, "le", "+Inf") << " " << s.count << "\n";
      out << name << "_sum" << LabelText(labels) << " " << FormatValue(s.sum) << "\n";
      out << name << "_count" << LabelText(labels) << " " << s.count << "\n";
    }
  }
  return out.str();
}

// --- OperatorMetrics ---

namespace {
constexpr char kReconcileTotal[] = "controller_runtime_reconcile_total";
constexpr char kReconcileErrors[] = "controller_runtime_reconcile_errors_total";
constexpr char kReconcileTime[] = "controller_runtime_reconcile_time_seconds";
constexpr char kQueueDepth[] = "workqueue_depth";
constexpr char kQueueAdds[] = "workqueue_adds_total";
constexpr char kEnqueues[] = "kernelcache_enqueues_total";
constexpr char kQueueRetries[] = "workqueue_retries_total";
constexpr char kRateLimiterWait[] = "rest_client_rate_limiter_duration_seconds";
constexpr char kLeader[] = "leader_election_master_status";
constexpr char kFingerprints[] = "kernelcache_fingerprints";
constexpr char kCacheBytes[] = "kernelcache_cache_bytes";
constexpr char kCacheFiles[] = "kernelcache_cache_files";
constexpr char kWarmupDuration[] = "kernelcache_warmup_duration_seconds";
constexpr char kTimeToReady[] = "kernelcache_time_to_ready_seconds";
constexpr char kGateOutcomes[] = "kernelcache_gate_outcomes_total";
constexpr char kGateWait[] = "kernelcache_gate_wait_seconds";
constexpr char kCompileSaved[] = "kernelcache_compile_seconds_saved_total";
constexpr char kRuntimeMisses[] = "kernelcache_runtime_misses_total";
constexpr char kMissReports[] = "kernelcache_miss_reports_total";
constexpr char kParity[] = "kernelcache_parity_mismatches_total";
constexpr core::GateOutcome kGateOutcomeValues[] = {
    core::GateOutcome::kWarm, core::GateOutcome::kCold, core::GateOutcome::kFailed};

MetricLabels KernelCacheLabels(const std::string& ns, const std::string& name) {
  return {{"namespace", ns}, {"kernelcache", name}};
}
}  // namespace

OperatorMetrics::OperatorMetrics() {
  using T = MetricsRegistry::Type;
  registry_.Declare(kReconcileTotal, T::kCounter, "Total number of reconciliations per controller");
  registry_.Declare(kReconcileErrors, T::kCounter,
                    "Total number of reconciliation errors per controller");
  registry_.Declare(
      kReconcileTime, T::kHistogram, "Length of time per reconciliation per controller",
      {0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
       0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
       6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60});
  registry_.Declare(kQueueDepth, T::kGauge, "Current depth of workqueue");
  registry_.Declare(kQueueAdds, T::kCounter, "Total number of adds handled by workqueue");
  registry_.Declare(kEnqueues, T::kCounter,
                    "KernelCache reconciles asked for, by what asked (an event of that kind)");
  registry_.Declare(kQueueRetries, T::kCounter, "Total number of retries handled by workqueue");
  registry_.Declare(kRateLimiterWait, T::kHistogram,
                    "Seconds an API request waited for the client-side rate limiter, by client "
                    "(api, events) and verb",
                    {0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60});
  registry_.Declare(kLeader, T::kGauge,
                    "Whether this replica is the leader of the lease (1) or not (0)");
  registry_.Declare(kFingerprints, T::kGauge, "Fingerprints of a KernelCache by cache state");
  registry_.Declare(kCacheBytes, T::kGauge, "Bytes of the Ready caches of a KernelCache");
  registry_.Declare(kCacheFiles, T::kGauge, "Files of the Ready caches of a KernelCache");
  registry_.Declare(kWarmupDuration, T::kHistogram,
                    "Warmup Job duration from creation to its end, by outcome",
                    {10, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200});
  registry_.Declare(kTimeToReady, T::kHistogram,
                    "Time from a fingerprint first appearing to its cache being Ready",
                    {10, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200});
  registry_.Declare(kGateOutcomes, T::kCounter,
                    "Gate runs of a KernelCache's gated pods, by outcome (Warm, Cold, Failed)");
  registry_.Declare(kGateWait, T::kHistogram,
                    "Seconds a gate run of a KernelCache's gated pod waited (its waitedMs)",
                    {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900});
  registry_.Declare(kCompileSaved, T::kCounter,
                    "Estimated compile seconds Warm gate runs did not spend: per Warm run, the "
                    "run time of the warmup container that sealed the fingerprint's cache");
  registry_.Declare(kRuntimeMisses, T::kCounter,
                    "Entries gated pods compiled after their gate (one per pod and entry), as "
                    "their miss watchers reported, by framework");
  registry_.Declare(kMissReports, T::kCounter,
                    "Miss reports received on /v1/misses, by HTTP status code answered");
  registry_.Declare(kParity, T::kCounter,
                    "Gated pods admitted that run another image or cache-affecting env than "
                    "their KernelCache's warmup (they compile what the cache lacks)");
}

void OperatorMetrics::ObserveReconcile(const std::string& controller, const std::string& result,
                                       double seconds) {
  registry_.Add(kReconcileTotal, {{"controller", controller}, {"result", result}});
  if (result == "error") registry_.Add(kReconcileErrors, {{"controller", controller}});
  registry_.Observe(kReconcileTime, {{"controller", controller}}, seconds);
}

void OperatorMetrics::SetQueueDepth(const std::string& queue, int depth) {
  registry_.Set(kQueueDepth, {{"name", queue}}, depth);
}
void OperatorMetrics::CountQueueAdd(const std::string& queue) {
  registry_.Add(kQueueAdds, {{"name", queue}});
}
void OperatorMetrics::CountEnqueue(const char* source) {
  registry_.Add(kEnqueues, {{"source", source}});
}
void OperatorMetrics::CountQueueRetry(const std::string& queue) {
  registry_.Add(kQueueRetries, {{"name", queue}});
}
void OperatorMetrics::ObserveRateLimiterWait(const std::string& client, const std::string& verb,
                                             double seconds) {
  registry_.Observe(kRateLimiterWait, {{"client", client}, {"verb", verb}}, seconds);
}
void OperatorMetrics::SetLeader(const std::string& lease, bool leader) {
  registry_.Set(kLeader, {{"name", lease}}, leader ? 1 : 0);
}

void OperatorMetrics::SetKernelCache(const std::string& ns, const std::string& name,
                                     const std::map<std::string, int>& by_state, double bytes,
                                     double files) {
  const MetricLabels id = KernelCacheLabels(ns, name);
  // Every state is set (0 when none), so the series are the same each pass:
  // no Remove (a walk of every KernelCache's series) is needed.
  for (const std::string_view sv : core::fp_state::kAll) {
    const std::string state(sv);
    auto it = by_state.find(state);
    MetricLabels l = id;
    l.emplace_back("state", state);
    registry_.Set(kFingerprints, l, it == by_state.end() ? 0 : it->second);
  }
  registry_.Set(kCacheBytes, id, bytes);
  registry_.Set(kCacheFiles, id, files);
  for (const core::GateOutcome o : kGateOutcomeValues) CountGateOutcome(ns, name, o, 0);
}

void OperatorMetrics::ForgetKernelCache(const std::string& ns, const std::string& name) {
  const MetricLabels id = KernelCacheLabels(ns, name);
  registry_.Remove(kFingerprints, id);
  registry_.Remove(kCacheBytes, id);
  registry_.Remove(kCacheFiles, id);
  registry_.Remove(kGateOutcomes, id);
  registry_.Remove(kGateWait, id);
  registry_.Remove(kCompileSaved, id);
  registry_.Remove(kRuntimeMisses, id);
  registry_.Remove(kParity, id);
}

void OperatorMetrics::CountRuntimeMisses(const std::string& ns, const std::string& name,
                                         const std::string& fingerprint, std::string_view framework,
                                         int misses) {
  MetricLabels l = KernelCacheLabels(ns, name);
  l.emplace_back("fingerprint", fingerprint);
  l.emplace_back("framework", std::string(framework));
  registry_.Add(kRuntimeMisses, l, misses);
}

void OperatorMetrics::CountParityMismatch(const std::string& ns, const std::string& name) {
  registry_.Add(kParity, KernelCacheLabels(ns, name));
}

void OperatorMetrics::CountMissReport(int http_status) {
  registry_.Add(kMissReports, {{"code", std::to_string(http_status)}});
}

void OperatorMetrics::CountGateOutcome(const std::string& ns, const std::string& name,
                                       core::GateOutcome outcome, int runs) {
  MetricLabels l = KernelCacheLabels(ns, name);
  l.emplace_back("outcome", std::string(core::GateOutcomeName(outcome)));
  registry_.Add(kGateOutcomes, l, runs);
}

void OperatorMetrics::ObserveGateWait(const std::string& ns, const std::string& name,
                                      double seconds) {
  registry_.Observe(kGateWait, KernelCacheLabels(ns, name), seconds);
}

void OperatorMetrics::AddCompileSecondsSaved(const std::string& ns, const std::string& name,
                                             const std::string& fingerprint, double seconds) {
  MetricLabels l = KernelCacheLabels(ns, name);
  l.emplace_back("fingerprint", fingerprint);
  registry_.Add(kCompileSaved, l, seconds);
}

void OperatorMetrics::ForgetFingerprint(const std::string& ns, const std::string& name,
                                        const std::string& fingerprint) {
  MetricLabels l = KernelCacheLabels(ns, name);
  l.emplace_back("fingerprint", fingerprint);
  registry_.Remove(kCompileSaved, l);
  registry_.Remove(kRuntimeMisses, l);
}

void OperatorMetrics::ObserveWarmup(const std::string& outcome, double seconds) {
  registry_.Observe(kWarmupDuration, {{"outcome", outcome}}, seconds);
}

void OperatorMetrics::ObserveTimeToReady(double seconds) {
  registry_.Observe(kTimeToReady, {}, seconds);
}

}  // namespace kc::op
