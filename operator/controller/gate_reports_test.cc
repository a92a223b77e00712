#include "operator/controller/gate_reports.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

Json Pod(Json init_statuses) {
  return {{"metadata", {{"name", "llama-0"}, {"namespace", "ml"}, {"uid", "pod-uid"}}},
          {"spec", {{"nodeName", "gpu-1"}}},
          {"status", {{"initContainerStatuses", std::move(init_statuses)}}}};
}

std::string Report(const std::string& fp) {
  core::GateReport r;
  r.outcome = core::GateOutcome::kFailed;
  r.reason = "Quarantined";
  r.quarantined.push_back(
      {fp, std::string(64, 'a'), std::string(64, 'a'), "Checksums", "f", "sha256 mismatch", ""});
  return core::GateReportToJson(r);
}

TEST(GateReports, ReadsStateAndLastStateOfTheGateContainerOnly) {
  Json pod = Pod(Json::array(
      {{{"name", "other-init"},
        {"state", {{"terminated", {{"exitCode", 1}, {"message", Report("1111111111111111")}}}}}},
       {{"name", "kernelcache-wait"},
        {"state", {{"running", Json::object()}}},
        {"lastState",
         {{"terminated",
           {{"exitCode", 9},
            {"message", Report("2222222222222222")},
            {"containerID", "containerd://run0"}}}}}}}));
  auto v = GateReportsFromPod(pod);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].pod, "llama-0");
  EXPECT_EQ(v[0].pod_uid, "pod-uid");
  EXPECT_EQ(v[0].node, "gpu-1");
  EXPECT_EQ(v[0].container_id, "containerd://run0");
  ASSERT_EQ(v[0].report.quarantined.size(), 1u);
  EXPECT_EQ(v[0].report.quarantined[0].fingerprint, "2222222222222222");
}

TEST(GateReports, HostileStatusesAreSkippedNotFatal) {
  for (const Json& bad :
       {Json(), Json::array(), Json{{"status", 5}},
        Json{{"status", {{"initContainerStatuses", 1}}}},
        Pod(Json::array({1, "x", Json::object()})),
        Pod(Json::array({{{"name", "kernelcache-wait"}, {"state", {{"terminated", 5}}}}})),
        Pod(Json::array({{{"name", "kernelcache-wait"},
                          {"state", {{"terminated", {{"message", "not json"}}}}}}})),
        Pod(Json::array(
            {{{"name", "kernelcache-wait"}, {"state", {{"terminated", {{"message", 42}}}}}}}))}) {
    EXPECT_TRUE(GateReportsFromPod(bad).empty()) << bad.dump();
  }
}

}  // namespace
}  // namespace kc::op
