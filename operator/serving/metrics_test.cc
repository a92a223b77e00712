#include "operator/serving/metrics.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

bool Contains(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(MetricsRegistryTest, CounterGaugeExposition) {
  MetricsRegistry r;
  r.Declare("a_total", MetricsRegistry::Type::kCounter, "A help\nline");
  r.Declare("g", MetricsRegistry::Type::kGauge, "G");
  r.Add("a_total", {{"x", "1"}, {"b", "q\"uote"}});
  r.Add("a_total", {{"b", "q\"uote"}, {"x", "1"}}, 2);  // label order does not matter
  r.Set("g", {}, 1.5);
  r.Add("undeclared", {});  // ignored
  std::string text = r.Render();
  EXPECT_TRUE(Contains(text, "# HELP a_total A help\\nline")) << text;
  EXPECT_TRUE(Contains(text, "# TYPE a_total counter")) << text;
  EXPECT_TRUE(Contains(text, "a_total{b=\"q\\\"uote\",x=\"1\"} 3")) << text;
  EXPECT_TRUE(Contains(text, "g 1.5")) << text;
  EXPECT_EQ(text.find("undeclared"), std::string::npos);
}

TEST(MetricsRegistryTest, HistogramIsCumulative) {
  MetricsRegistry r;
  r.Declare("h", MetricsRegistry::Type::kHistogram, "H", {1, 5});
  r.Observe("h", {{"c", "k"}}, 0.5);
  r.Observe("h", {{"c", "k"}}, 3);
  r.Observe("h", {{"c", "k"}}, 100);
  std::string text = r.Render();
  EXPECT_TRUE(Contains(text, "h_bucket{c=\"k\",le=\"1\"} 1")) << text;
  EXPECT_TRUE(Contains(text, "h_bucket{c=\"k\",le=\"5\"} 2")) << text;
  EXPECT_TRUE(Contains(text, "h_bucket{c=\"k\",le=\"+Inf\"} 3")) << text;
  EXPECT_TRUE(Contains(text, "h_sum{c=\"k\"} 103.5")) << text;
  EXPECT_TRUE(Contains(text, "h_count{c=\"k\"} 3")) << text;
}

TEST(OperatorMetricsTest, ControllerRuntimeNames) {
  OperatorMetrics m;
  m.ObserveReconcile("kernelcache", "success", 0.01);
  m.ObserveReconcile("kernelcache", "error", 0.02);
  m.SetQueueDepth("kernelcache", 4);
  std::string text = m.Render();
  EXPECT_TRUE(Contains(
      text, "controller_runtime_reconcile_total{controller=\"kernelcache\",result=\"success\"} 1"))
      << text;
  EXPECT_TRUE(
      Contains(text, "controller_runtime_reconcile_errors_total{controller=\"kernelcache\"} 1"));
  EXPECT_TRUE(Contains(
      text, "controller_runtime_reconcile_time_seconds_count{controller=\"kernelcache\"} 2"));
  EXPECT_TRUE(Contains(text, "workqueue_depth{name=\"kernelcache\"} 4"));
}

TEST(OperatorMetricsTest, RateLimiterWaitByClientAndVerb) {
  OperatorMetrics m;
  m.ObserveRateLimiterWait("api", "POST", 0);
  m.ObserveRateLimiterWait("api", "POST", 0.3);
  m.ObserveRateLimiterWait("events", "POST", 0.01);
  const std::string text = m.Render();
  EXPECT_TRUE(Contains(
      text, "rest_client_rate_limiter_duration_seconds_count{client=\"api\",verb=\"POST\"} 2"))
      << text;
  EXPECT_TRUE(Contains(
      text, "rest_client_rate_limiter_duration_seconds_sum{client=\"api\",verb=\"POST\"} 0.3"))
      << text;
  EXPECT_TRUE(Contains(text,
                       "rest_client_rate_limiter_duration_seconds_bucket{client=\"api\","
                       "verb=\"POST\",le=\"0.25\"} 1"))
      << text;
  // Bounds in their shortest form.
  EXPECT_TRUE(Contains(text,
                       "rest_client_rate_limiter_duration_seconds_bucket{client=\"api\","
                       "verb=\"POST\",le=\"0.005\"} 1"))
      << text;
  EXPECT_TRUE(Contains(
      text, "rest_client_rate_limiter_duration_seconds_count{client=\"events\",verb=\"POST\"} 1"))
      << text;
}

TEST(OperatorMetricsTest, KernelCacheGaugesReplacedAndForgotten) {
  OperatorMetrics m;
  m.SetKernelCache("ml", "llama", {{"Ready", 2}, {"Warming", 1}}, 2048, 10);
  m.SetKernelCache("ml", "llama", {{"Ready", 3}}, 4096, 12);
  auto& r = m.registry();
  EXPECT_EQ(r.Value("kernelcache_fingerprints",
                    {{"namespace", "ml"}, {"kernelcache", "llama"}, {"state", "Ready"}}),
            3);
  EXPECT_EQ(r.Value("kernelcache_fingerprints",
                    {{"namespace", "ml"}, {"kernelcache", "llama"}, {"state", "Warming"}}),
            0);
  EXPECT_EQ(r.Value("kernelcache_cache_bytes", {{"namespace", "ml"}, {"kernelcache", "llama"}}),
            4096);
  m.ForgetKernelCache("ml", "llama");
  EXPECT_EQ(m.Render().find("kernelcache=\"llama\""), std::string::npos);
  m.ObserveWarmup("Published", 42);
  m.ObserveTimeToReady(60);
  EXPECT_EQ(r.Count("kernelcache_warmup_duration_seconds", {{"outcome", "Published"}}), 1u);
  EXPECT_EQ(r.Count("kernelcache_time_to_ready_seconds", {}), 1u);
}

// Every fingerprint state is exported, Degraded (a quarantined cache being
// re-warmed) included, so the per-state series add up to the fingerprints.
TEST(OperatorMetricsTest, EveryFingerprintStateIsCountedDegradedIncluded) {
  OperatorMetrics m;
  const std::map<std::string, int> by_state = {{"Pending", 1},  {"Warming", 2}, {"Ready", 3},
                                               {"Degraded", 4}, {"Failed", 5},  {"Stale", 6},
                                               {"Absent", 7}};
  m.SetKernelCache("ml", "llama", by_state, 0, 0);
  auto& r = m.registry();
  for (const auto& [state, n] : by_state) {
    EXPECT_EQ(r.Value("kernelcache_fingerprints",
                      {{"namespace", "ml"}, {"kernelcache", "llama"}, {"state", state}}),
              n)
        << state;
  }
  EXPECT_TRUE(Contains(m.Render(),
                       "kernelcache_fingerprints{kernelcache=\"llama\",namespace="
                       "\"ml\",state=\"Degraded\"} 4"))
      << m.Render();
  m.SetKernelCache("ml", "llama", {{"Ready", 1}}, 0, 0);
  EXPECT_EQ(r.Value("kernelcache_fingerprints",
                    {{"namespace", "ml"}, {"kernelcache", "llama"}, {"state", "Degraded"}}),
            0);
}

// The gate series: outcome counters that start at 0 with the KernelCache,
// a wait histogram in the text format (buckets 0.01 s to 15 min), compile
// seconds saved per fingerprint; all forgotten with the KernelCache, the
// saved series also with its fingerprint.
TEST(OperatorMetricsTest, GateSeries) {
  OperatorMetrics m;
  auto& r = m.registry();
  const MetricLabels id = {{"namespace", "ml"}, {"kernelcache", "llama"}};
  auto with = [&](const char* key, const std::string& value) {
    MetricLabels l = id;
    l.emplace_back(key, value);
    return l;
  };
  m.SetKernelCache("ml", "llama", {}, 0, 0);
  std::string text = m.Render();
  EXPECT_TRUE(Contains(text, "# TYPE kernelcache_gate_outcomes_total counter")) << text;
  for (const char* o : {"Warm", "Cold", "Failed"}) {
    EXPECT_TRUE(Contains(text, std::string("kernelcache_gate_outcomes_total{kernelcache=\"llama\","
                                           "namespace=\"ml\",outcome=\"") +
                                   o + "\"} 0"))
        << o << "\n"
        << text;
  }
  m.CountGateOutcome("ml", "llama", core::GateOutcome::kWarm);
  m.CountGateOutcome("ml", "llama", core::GateOutcome::kWarm, 2);
  m.CountGateOutcome("ml", "llama", core::GateOutcome::kCold);
  m.SetKernelCache("ml", "llama", {}, 0, 0);  // the next pass keeps the counts
  EXPECT_EQ(r.Value("kernelcache_gate_outcomes_total", with("outcome", "Warm")), 3);
  EXPECT_EQ(r.Value("kernelcache_gate_outcomes_total", with("outcome", "Cold")), 1);
  EXPECT_EQ(r.Value("kernelcache_gate_outcomes_total", with("outcome", "Failed")), 0);

  m.ObserveGateWait("ml", "llama", 0.0078125);  // 2^-7: exact in the sum
  m.ObserveGateWait("ml", "llama", 1.5);
  m.ObserveGateWait("ml", "llama", 3600);
  EXPECT_EQ(r.Count("kernelcache_gate_wait_seconds", id), 3u);
  m.AddCompileSecondsSaved("ml", "llama", "0123456789abcdef", 187);
  m.AddCompileSecondsSaved("ml", "llama", "0123456789abcdef", 187);
  m.AddCompileSecondsSaved("ml", "llama", "fedcba9876543210", 2.5);
  text = m.Render();
  const std::string l = "{kernelcache=\"llama\",namespace=\"ml\"";
  EXPECT_TRUE(Contains(text, "# TYPE kernelcache_gate_wait_seconds histogram")) << text;
  EXPECT_TRUE(Contains(text, "kernelcache_gate_wait_seconds_bucket" + l + ",le=\"0.01\"} 1"))
      << text;
  EXPECT_TRUE(Contains(text, "kernelcache_gate_wait_seconds_bucket" + l + ",le=\"1\"} 1"));
  EXPECT_TRUE(Contains(text, "kernelcache_gate_wait_seconds_bucket" + l + ",le=\"2.5\"} 2"));
  EXPECT_TRUE(Contains(text, "kernelcache_gate_wait_seconds_bucket" + l + ",le=\"900\"} 2"));
  EXPECT_TRUE(Contains(text, "kernelcache_gate_wait_seconds_bucket" + l + ",le=\"+Inf\"} 3"));
  EXPECT_TRUE(Contains(text, "kernelcache_gate_wait_seconds_sum" + l + "} 3601.5078125")) << text;
  EXPECT_TRUE(Contains(text, "kernelcache_gate_wait_seconds_count" + l + "} 3"));
  EXPECT_TRUE(Contains(text, "# TYPE kernelcache_compile_seconds_saved_total counter"));
  EXPECT_TRUE(Contains(text,
                       "kernelcache_compile_seconds_saved_total{fingerprint=\"0123456789abcdef"
                       "\",kernelcache=\"llama\",namespace=\"ml\"} 374"))
      << text;

  m.ForgetFingerprint("ml", "llama", "0123456789abcdef");
  EXPECT_EQ(m.Render().find("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(
      r.Value("kernelcache_compile_seconds_saved_total", with("fingerprint", "fedcba9876543210")),
      2.5);
  m.SetKernelCache("ml", "other", {}, 0, 0);
  m.ForgetKernelCache("ml", "llama");
  text = m.Render();
  EXPECT_EQ(text.find("kernelcache=\"llama\""), std::string::npos) << text;
  EXPECT_NE(text.find("kernelcache_gate_outcomes_total{kernelcache=\"other\""), std::string::npos);
}

TEST(OperatorMetricsTest, RuntimeMissSeriesAndTheirRemoval) {
  OperatorMetrics m;
  auto& r = m.registry();
  const MetricLabels triton = {{"namespace", "ml"},
                               {"kernelcache", "llama"},
                               {"fingerprint", "0123456789abcdef"},
                               {"framework", "triton"}};
  m.CountRuntimeMisses("ml", "llama", "0123456789abcdef", "triton", 2);
  m.CountRuntimeMisses("ml", "llama", "0123456789abcdef", "triton", 1);
  m.CountMissReport(200);
  m.CountMissReport(403);
  EXPECT_EQ(r.Value("kernelcache_runtime_misses_total", triton), 3);
  EXPECT_EQ(r.Value("kernelcache_miss_reports_total", {{"code", "403"}}), 1);
  const std::string text = m.Render();
  EXPECT_TRUE(Contains(text, "# TYPE kernelcache_runtime_misses_total counter")) << text;
  EXPECT_TRUE(Contains(text,
                       "kernelcache_runtime_misses_total{fingerprint=\"0123456789abcdef\","
                       "framework=\"triton\",kernelcache=\"llama\",namespace=\"ml\"} 3"))
      << text;
  m.ForgetFingerprint("ml", "llama", "0123456789abcdef");
  EXPECT_FALSE(Contains(m.Render(), "kernelcache_runtime_misses_total{"));
  m.CountRuntimeMisses("ml", "llama", "0123456789abcdef", "inductor", 1);
  m.ForgetKernelCache("ml", "llama");
  EXPECT_FALSE(Contains(m.Render(), "kernelcache_runtime_misses_total{"));
}

TEST(OperatorMetricsTest, ParityMismatchesPerKernelCacheGoWithIt) {
  OperatorMetrics m;
  m.CountParityMismatch("ml", "llama");
  m.CountParityMismatch("ml", "llama");
  EXPECT_EQ(m.registry().Value("kernelcache_parity_mismatches_total",
                               {{"namespace", "ml"}, {"kernelcache", "llama"}}),
            2);
  EXPECT_TRUE(Contains(m.Render(), "# TYPE kernelcache_parity_mismatches_total counter"));
  m.ForgetKernelCache("ml", "llama");
  EXPECT_FALSE(Contains(m.Render(), "kernelcache_parity_mismatches_total{"));
}

}  // namespace
}  // namespace kc::op
