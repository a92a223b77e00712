// KernelCaches the API server accepts (they pass the CRD's
// schema and CEL as it stood) that took the operator down. Each goes the way
// an informer event goes: JSON -> core::KernelCacheFromJson -> Decide (which
// runs core::ValidateSpec) -> the status and Events serialised as the
// reconciler sends them. Before the fix these threw (std::stod out_of_range,
// nlohmann type_error 316 on a cut UTF-8 character) out of a worker thread:
// std::terminate, and a crash loop, since the object is still there on
// restart. Now each is an InvalidSpec condition naming the field, or a
// normal failure record.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/api_types.h"
#include "operator/decide/decide.h"
#include "operator/decide/names.h"
#include "operator/decide/views.h"
#include "operator/testing/objects.h"

namespace kc::op {
namespace {

using Json = nlohmann::json;

const Time kNow = api::ParseTime("2026-12-02T10:00:00Z").value();

Json KernelCacheJson() {
  return Json::parse(R"({
    "apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
    "metadata": {"name": "llama", "namespace": "ml", "uid": "kc-uid", "generation": 1,
                 "resourceVersion": "7", "finalizers": ["kernelcache.io/cleanup"]},
    "spec": {
      "podSelector": {"matchLabels": {"app": "llama"}},
      "nodeSelector": {"nvidia.com/gpu.present": "true"},
      "image": "registry.example/llama@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "warmup": {"command": ["python3", "/app/warmup.py"]},
      "storage": {"size": "20Gi"},
      "consume": {"mode": "Copy", "waitTimeoutSeconds": 900, "onTimeout": "Fail",
                  "verify": "Manifest"},
      "retention": {"staleAfter": "24h"}
    }})");
}

Json NodeJson() { return fixtures::GpuNodeJson("gpu-1"); }

Observed ObservedFrom(const Json& kc) {
  Observed o;
  o.kc = core::KernelCacheFromJson(kc, &o.parse_errors);
  o.nodes.push_back(NodeViewFromJson(NodeJson()));
  PvcView pvc;
  pvc.name = "llama-cache";
  pvc.uid = "pvc-uid";
  pvc.phase = "Bound";
  pvc.access_modes = {"ReadWriteMany"};
  pvc.owned_by_us = true;
  o.pvc = pvc;
  return o;
}

// What the reconciler serialises from a plan: the status patch body and
// every object and Event it sends.
void Serialise(const Plan& p) {
  (void)core::StatusToJson(p.status).dump();
  for (const Action& a : p.actions) {
    (void)a.object.dump();
    (void)Json(a.event_message).dump();
  }
}

std::string InvalidSpecMessage(const Plan& p) {
  const api::Condition* c = api::FindCondition(p.status.conditions, core::condition::kInvalidSpec);
  return c != nullptr && c->status == "True" ? c->message : "";
}

TEST(HostileInputTest, CrdValidSpecsBecomeInvalidSpecNotACrash) {
  struct Case {
    std::string name;
    std::function<void(Json&)> mutate;
    std::string want;  // in the InvalidSpec message
  } cases[] = {
      // Pattern ^[0-9]+(\.[0-9]+)?(Ki|...)?$ with no maxLength: std::stod threw out_of_range.
      {"size of 400 digits", [](Json& j) { j["spec"]["storage"]["size"] = std::string(400, '9'); },
       "spec.storage.size"},
      {"size 0.(400 zeros)1",
       [](Json& j) { j["spec"]["storage"]["size"] = "0." + std::string(400, '0') + "1"; },
       "spec.storage.size"},
      {"maxBytes of 400 digits",
       [](Json& j) { j["spec"]["retention"]["maxBytes"] = "1" + std::string(399, '0') + "Ki"; },
       "spec.retention.maxBytes"},
      {"maxBytes over int64",
       [](Json& j) { j["spec"]["retention"]["maxBytes"] = "9999999999999999Gi"; },
       "spec.retention.maxBytes"},
      // Passed validation, then overflowed the nanosecond clock in Decide (UB).
      {"staleAfter 999999999h",
       [](Json& j) { j["spec"]["retention"]["staleAfter"] = "999999999h"; },
       "spec.retention.staleAfter"},
      {"purgeSchedule of many parts",
       [](Json& j) { j["spec"]["retention"]["purgeSchedule"] = "999999999h999999999h999999999h"; },
       "spec.retention.purgeSchedule"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Json kc = KernelCacheJson();
    c.mutate(kc);
    Plan p;
    EXPECT_NO_THROW({
      Observed o = ObservedFrom(kc);
      p = Decide(o, kNow);
      Serialise(p);
    });
    EXPECT_NE(InvalidSpecMessage(p).find(c.want), std::string::npos) << InvalidSpecMessage(p);
    EXPECT_EQ(p.status.phase, "Invalid");
  }
}

// The user's warmup container ends with a long termination message whose
// 300th byte falls inside a multi-byte character: the failure summary cut
// there was invalid UTF-8, and serialising the status patch threw.
TEST(HostileInputTest, WarmupFailureMessageWithUnicodeIsRecorded) {
  Json kc = KernelCacheJson();
  Observed o = ObservedFrom(kc);
  Plan first = Decide(o, kNow);
  const Action* create = nullptr;
  for (const Action& a : first.actions) {
    if (a.kind == Action::Kind::kCreateJob) create = &a;
  }
  ASSERT_NE(create, nullptr);
  o.kc.status = first.status;

  Json job = create->object;
  job["metadata"]["uid"] = "job-uid-1";
  job["metadata"]["creationTimestamp"] = "2026-12-02T10:00:00Z";
  job["status"] = Json::parse(R"({"failed": 3, "conditions": [{"type": "Failed",
      "status": "True", "reason": "BackoffLimitExceeded",
      "lastTransitionTime": "2026-12-02T10:05:00Z"}]})");
  std::string message(299, 'a');
  for (int i = 0; i < 400; ++i) message += "\xC3\xBC";  // ü
  Json pod = {
      {"metadata",
       {{"name", create->name + "-x"},
        {"labels", {{"job-name", create->name}, {kLabelName, "llama"}}},
        {"ownerReferences",
         {{{"apiVersion", "batch/v1"},
           {"kind", "Job"},
           {"name", create->name},
           {"uid", "job-uid-1"},
           {"controller", true}}}},
        {"creationTimestamp", "2026-12-02T10:00:01Z"}}},
      {"spec", {{"nodeName", "gpu-1"}}},
      {"status",
       {{"phase", "Failed"},
        {"initContainerStatuses",
         Json::array({{{"name", "warmup"},
                       {"state",
                        {{"terminated",
                          {{"exitCode", 1}, {"reason", "Error"}, {"message", message}}}}}}})}}}};
  // The pod runs the Job's template (a result is read only from such a pod).
  Json spec = job["spec"]["template"]["spec"];
  spec["nodeName"] = "gpu-1";
  pod["spec"] = spec;
  o.jobs = {JobViewFromJson(job)};
  o.pods = {PodViewFromJson(pod)};
  Plan second;
  EXPECT_NO_THROW({
    second = Decide(o, kNow + std::chrono::minutes(6));
    Serialise(second);
  });
  ASSERT_EQ(second.status.fingerprints.size(), 1u);
  EXPECT_EQ(second.status.fingerprints[0].failures, 1);
  EXPECT_NE(second.status.fingerprints[0].last_failure.find("warmup: Error (exit 1)"),
            std::string::npos);
}

}  // namespace
}  // namespace kc::op
