#include "core/api_types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <optional>

namespace kc::core {
namespace {

using std::chrono::seconds;

const char* kFull = R"({
  "apiVersion": "kernelcache.io/v1alpha1",
  "kind": "KernelCache",
  "metadata": {"name": "llama", "namespace": "ml", "uid": "u-1", "generation": 4,
               "creationTimestamp": "2026-12-01T10:00:00Z",
               "finalizers": ["kernelcache.io/cleanup"], "labels": {"team": "a"}},
  "spec": {
    "podSelector": {"matchLabels": {"app": "llama"},
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]},
    "nodeSelector": {"nvidia.com/gpu.present": "true"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "image": "registry.example/llama@sha256:abc",
    "runtime": {"pytorch": "2.11.0", "triton": "3.6.0"},
    "warmup": {"command": ["python3", "/app/warmup.py"], "args": ["--fast"],
               "env": [{"name": "TORCH_LOGS", "value": "x"}, {"name": "HOME", "value": "/tmp"},
                       {"name": "TRITON_CACHE_DIR", "value": "/x"},
                       {"name": "CUDA_VISIBLE", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
               "shapes": [{"batch": 1, "seqLen": 128}, {"batch": 8, "seqLen": 1024}],
               "resources": {"limits": {"memory": "16Gi"}},
               "activeDeadlineSeconds": 600, "backoffLimit": 1,
               "podAnnotations": {"sidecar.istio.io/inject": "false"}},
    "storage": {"storageClassName": "nfs", "size": "20Gi"},
    "consume": {"mode": "Shared", "waitTimeoutSeconds": 300, "onTimeout": "StartCold",
                "verify": "Checksums"},
    "retention": {"staleAfter": "12h", "absentAfter": "72h", "maxBytes": "10Gi",
                  "purgeSchedule": "168h"},
    "securityContext": {"fsGroup": 2000, "runAsUser": 1000}
  },
  "status": {
    "observedGeneration": 3,
    "conditions": [{"type": "Ready", "status": "True", "reason": "AllReady", "message": "m",
                    "observedGeneration": 3, "lastTransitionTime": "2026-12-01T11:00:00Z"}],
    "phase": "Ready", "readyFingerprints": 1, "totalFingerprints": 1, "ready": "1/1",
    "totalBytes": 2048, "size": "2Ki", "claimName": "llama-cache",
    "fingerprints": [{"id": "3f9a1c2b7d4e5f60", "gpuProduct": "NVIDIA-H200",
                      "computeCapability": "9.0", "driver": "580.159.04", "cudaDriver": "13.0",
                      "arch": "amd64", "nodes": 2, "state": "Ready", "job": "llama-warm-3f9a",
                      "bytes": 2048, "files": 3, "manifestDigest": "abcd",
                      "readyAt": "2026-12-01T11:00:00Z", "failures": 1,
                      "lastFailure": "BackoffLimitExceeded",
                      "lastFailureTime": "2026-12-01T10:30:00Z", "warmGeneration": 2, "jobUid": "ju",
                      "cancelledJobUids": ["c1", "c2"], "lastTransitionTime": "2026-12-01T11:00:00Z"},
                     {"id": "0123456789abcdef", "nodes": 0, "state": "Absent",
                      "absentSince": "2026-12-01T20:00:00Z", "lastNodes": ["gpu-1", "gpu-2"]}]
  }
})";

TEST(ApiTypes, ParsesEveryField) {
  std::vector<std::string> errors;
  KernelCache kc = KernelCacheFromJson(Json::parse(kFull), &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(kc.metadata.name, "llama");
  EXPECT_EQ(kc.metadata.namespace_, "ml");
  EXPECT_EQ(kc.metadata.generation, 4);
  ASSERT_EQ(kc.metadata.finalizers.size(), 1u);
  EXPECT_EQ(kc.spec.pod_selector.match_labels.at("app"), "llama");
  ASSERT_EQ(kc.spec.pod_selector.match_expressions.size(), 1u);
  EXPECT_EQ(kc.spec.pod_selector.match_expressions[0].op, "In");
  EXPECT_EQ(kc.spec.node_selector.at("nvidia.com/gpu.present"), "true");
  EXPECT_EQ(kc.spec.tolerations.size(), 1u);
  EXPECT_EQ(kc.spec.runtime.at("triton"), "3.6.0");
  EXPECT_EQ(kc.spec.warmup.command, (std::vector<std::string>{"python3", "/app/warmup.py"}));
  EXPECT_EQ(kc.spec.warmup.shapes.size(), 2u);
  EXPECT_EQ(kc.spec.warmup.active_deadline_seconds, 600);
  EXPECT_EQ(kc.spec.warmup.backoff_limit, 1);
  EXPECT_EQ(kc.spec.warmup.pod_annotations,
            (std::map<std::string, std::string>{{"sidecar.istio.io/inject", "false"}}));
  EXPECT_EQ(kc.spec.storage.size, "20Gi");
  EXPECT_EQ(kc.spec.consume.mode, ConsumeMode::kShared);
  EXPECT_EQ(kc.spec.consume.wait_timeout_seconds, 300);
  EXPECT_EQ(kc.spec.retention.purge_schedule, "168h");
  EXPECT_EQ(kc.spec.retention.absent_after, "72h");
  EXPECT_EQ(kc.spec.security_context.fs_group, 2000);
  EXPECT_EQ(kc.spec.security_context.run_as_user, 1000);
  ASSERT_EQ(kc.status.fingerprints.size(), 2u);
  const auto& absent = kc.status.fingerprints[1];
  EXPECT_EQ(absent.state, "Absent");
  ASSERT_TRUE(absent.absent_since.has_value());
  EXPECT_EQ(api::FormatTime(*absent.absent_since), "2026-12-01T20:00:00Z");
  EXPECT_EQ(absent.last_nodes, (std::vector<std::string>{"gpu-1", "gpu-2"}));
  const auto& f = kc.status.fingerprints[0];
  EXPECT_EQ(f.state, "Ready");
  EXPECT_EQ(f.warm_generation, 2);
  EXPECT_EQ(f.job_uid, "ju");
  EXPECT_EQ(f.cancelled_job_uids, (std::vector<std::string>{"c1", "c2"}));
  ASSERT_TRUE(f.ready_at.has_value());
  EXPECT_EQ(api::FormatTime(*f.ready_at), "2026-12-01T11:00:00Z");
  EXPECT_EQ(kc.status.conditions[0].observed_generation, 3);
}

TEST(ApiTypes, RoundTripIsStable) {
  KernelCache kc = KernelCacheFromJson(Json::parse(kFull));
  Json once = KernelCacheToJson(kc);
  std::vector<std::string> errors;
  KernelCache again = KernelCacheFromJson(once, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(again.spec, kc.spec);
  EXPECT_EQ(again.status, kc.status);
  EXPECT_EQ(KernelCacheToJson(again), once);
}

TEST(ApiTypes, DefaultsWhenAbsent) {
  std::vector<std::string> errors;
  KernelCache kc = KernelCacheFromJson(
      Json::parse(R"({"metadata":{"name":"a"},"spec":{"image":"i","warmup":{"command":["x"]}}})"),
      &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(kc.spec.consume.mode, ConsumeMode::kCopy);
  EXPECT_EQ(kc.spec.consume.on_timeout, OnTimeout::kFail);
  EXPECT_EQ(kc.spec.consume.verify, Level::kManifest);
  EXPECT_EQ(kc.spec.consume.wait_timeout_seconds, 900);
  EXPECT_EQ(kc.spec.warmup.active_deadline_seconds, 1800);
  EXPECT_EQ(kc.spec.warmup.backoff_limit, 2);
  EXPECT_TRUE(kc.spec.warmup.pod_annotations.empty());
  EXPECT_FALSE(KernelCacheToJson(kc)["spec"]["warmup"].contains("podAnnotations"))
      << "absent stays absent: an object written back is the one an older operator wrote";
  EXPECT_EQ(kc.spec.retention.stale_after, "24h");
  EXPECT_EQ(kc.spec.retention.absent_after, "168h");
  EXPECT_FALSE(kc.spec.security_context.fs_group.has_value());
  EXPECT_FALSE(kc.spec.security_context.run_as_user.has_value());
  EXPECT_EQ(ClaimName(kc), "a-cache");
}

TEST(ApiTypes, TypeErrorsNameTheField) {
  std::vector<std::string> errors;
  KernelCacheFromJson(Json::parse(R"({"metadata":{"name":"a"},"spec":{
      "image": 3, "warmup": {"command": ["ok", 7], "backoffLimit": "two"},
      "runtime": {"pytorch": 2.11}, "storage": [],
      "securityContext": {"fsGroup": "2000", "runAsUser": 1.5}}})"),
                      &errors);
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  EXPECT_NE(all.find("spec.image: expected a string"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.warmup.command[1]: expected a string"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.warmup.backoffLimit: expected an integer"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.runtime.pytorch"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.storage: expected an object"), std::string::npos) << all;
  EXPECT_NE(all.find("spec.securityContext.fsGroup: expected an integer"), std::string::npos)
      << all;
  EXPECT_NE(all.find("spec.securityContext.runAsUser: expected an integer"), std::string::npos)
      << all;
}

// spec.consume's enums are decoded once, here: a name core/consume.h does
// not know is an error naming the field, leaves the default, and is kept on
// the object (decode_errors) for those who read it without `errors`.
TEST(ApiTypes, ConsumeEnumsAreDecodedOnce) {
  struct Case {
    std::string field, value, want_error;
  } cases[] = {
      {"mode", "Link", "spec.consume.mode: \"Link\" is not one of Copy, Shared, SharedReadWrite"},
      {"onTimeout", "Retry", "spec.consume.onTimeout: \"Retry\""},
      {"verify", "All", "spec.consume.verify: \"All\""},
      {"mode", "Shared", ""},
      {"onTimeout", "StartCold", ""},
      {"verify", "LoadTest", ""},
  };
  for (const auto& c : cases) {
    Json j = {{"metadata", {{"name", "a"}}},
              {"spec", {{"consume", {{c.field, c.value}}}, {"storage", {{"size", "1Gi"}}}}}};
    std::vector<std::string> errors;
    KernelCache kc = KernelCacheFromJson(j, &errors);
    EXPECT_EQ(kc.decode_errors, errors) << c.value;
    const Json back = SpecToJson(kc.spec)["consume"];
    if (c.want_error.empty()) {
      EXPECT_TRUE(errors.empty()) << c.value;
      EXPECT_EQ(back[c.field], c.value);
      continue;
    }
    ASSERT_EQ(errors.size(), 1u) << c.value;
    EXPECT_EQ(errors[0].rfind(c.want_error, 0), 0u) << errors[0];
    EXPECT_EQ(back, SpecToJson(KernelCacheSpec{})["consume"]) << c.value << ": the defaults stay";
  }
}

TEST(ApiTypes, ShareExistingClaim) {
  Json spec = {{"storage", {{"existingClaim", "team"}, {"shareExistingClaim", true}}}};
  std::vector<std::string> errors;
  KernelCacheSpec s = SpecFromJson(spec, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(s.storage.share_existing_claim);
  EXPECT_EQ(SpecToJson(s)["storage"]["shareExistingClaim"], true);
  EXPECT_FALSE(SpecToJson(KernelCacheSpec{})["storage"].contains("shareExistingClaim"));
  spec["storage"]["shareExistingClaim"] = "yes";
  errors.clear();
  s = SpecFromJson(spec, &errors);
  EXPECT_FALSE(s.storage.share_existing_claim);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "spec.storage.shareExistingClaim: expected true or false");
}

TEST(ApiTypes, MissingSpecIsAnError) {
  std::vector<std::string> errors;
  KernelCache kc =
      KernelCacheFromJson(Json::parse(R"({"metadata":{"name":"a","uid":"u"}})"), &errors);
  EXPECT_EQ(kc.metadata.uid, "u");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("spec"), std::string::npos);
}

TEST(ApiTypes, RuntimeFactsKeepCacheAffectingLiteralEnvOnly) {
  KernelCache kc = KernelCacheFromJson(Json::parse(kFull));
  RuntimeFacts r = RuntimeFactsFor(kc.spec);
  EXPECT_EQ(r.image, "registry.example/llama@sha256:abc");
  EXPECT_EQ(r.runtime.at("pytorch"), "2.11.0");
  EXPECT_EQ(r.env, (std::map<std::string, std::string>{{"TORCH_LOGS", "x"}}));
}

// An integer field beyond its C++ type is a decode error naming the field,
// not a silent wrap-around (18446744073709551615 read as int32 was -1).
TEST(ApiTypes, OutOfRangeIntegersAreDecodeErrors) {
  Json j = {{"spec",
             {{"warmup",
               {{"backoffLimit", 4294967298LL},
                {"activeDeadlineSeconds", std::numeric_limits<uint64_t>::max()}}}}}};
  std::vector<std::string> errors;
  KernelCache kc = KernelCacheFromJson(j, &errors);
  auto has = [&](const std::string& field) {
    return std::any_of(errors.begin(), errors.end(),
                       [&](const std::string& e) { return e.rfind(field + ": ", 0) == 0; });
  };
  EXPECT_TRUE(has("spec.warmup.backoffLimit")) << Json(errors).dump();
  EXPECT_TRUE(has("spec.warmup.activeDeadlineSeconds")) << Json(errors).dump();
  EXPECT_EQ(kc.spec.warmup.backoff_limit, 2) << "the default stays";
}

TEST(ApiTypes, RuntimeMissesRoundTripAndStayAbsentWhenNone) {
  const Json fp = Json::parse(R"({"id":"0123456789abcdef","state":"Ready","runtimeMisses":
      {"count":3,"pods":2,"top":[{"framework":"triton","detail":"kernel add_kernel","pods":2}]}})");
  Json kc_json = {{"metadata", {{"name", "a"}}},
                  {"spec", {{"image", "i"}, {"warmup", {{"command", {"x"}}}}}},
                  {"status", {{"fingerprints", Json::array({fp})}}}};
  std::vector<std::string> errors;
  KernelCache kc = KernelCacheFromJson(kc_json, &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(kc.status.fingerprints.size(), 1u);
  ASSERT_TRUE(kc.status.fingerprints[0].runtime_misses.has_value());
  const RuntimeMissStatus& m = *kc.status.fingerprints[0].runtime_misses;
  EXPECT_EQ(m.count, 3);
  EXPECT_EQ(m.pods, 2);
  ASSERT_EQ(m.top.size(), 1u);
  EXPECT_EQ(m.top[0].detail, "kernel add_kernel");
  EXPECT_EQ(KernelCacheToJson(kc)["status"]["fingerprints"][0]["runtimeMisses"],
            fp["runtimeMisses"]);
  kc.status.fingerprints[0].runtime_misses.reset();
  EXPECT_FALSE(KernelCacheToJson(kc)["status"]["fingerprints"][0].contains("runtimeMisses"));

  kc_json["status"]["fingerprints"][0]["runtimeMisses"] = {{"count", "many"}};
  errors.clear();
  StatusFromJson(kc_json["status"], &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("status.fingerprints[0].runtimeMisses.count"), std::string::npos)
      << errors[0];
}

TEST(ApiTypes, ConvergenceSpecAndStatusRoundTrip) {
  Json kc_json = {
      {"metadata", {{"name", "a"}}},
      {"spec",
       {{"image", "i"},
        {"warmup",
         {{"command", {"x"}}, {"convergence", {{"maxPasses", 5}, {"onNotConverged", "Fail"}}}}}}},
      {"status",
       {{"fingerprints", Json::array({{{"id", "0123456789abcdef"},
                                       {"state", "Ready"},
                                       {"convergence",
                                        {{"passes", 2},
                                         {"converged", true},
                                         {"lastPassEntries", 0},
                                         {"lastPassAutotune", 0},
                                         {"message", "converged after 2 passes"}}}}})}}}};
  std::vector<std::string> errors;
  KernelCache kc = KernelCacheFromJson(kc_json, &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  EXPECT_EQ(kc.spec.warmup.convergence.max_passes, 5);
  EXPECT_EQ(kc.spec.warmup.convergence.on_not_converged, NotConvergedPolicy::kFail);
  ASSERT_TRUE(kc.status.fingerprints[0].convergence.has_value());
  EXPECT_EQ(kc.status.fingerprints[0].convergence->message, "converged after 2 passes");
  const Json back = KernelCacheToJson(kc);
  EXPECT_EQ(back["spec"]["warmup"]["convergence"], kc_json["spec"]["warmup"]["convergence"]);
  EXPECT_EQ(back["status"]["fingerprints"][0]["convergence"],
            kc_json["status"]["fingerprints"][0]["convergence"]);

  // Absent: the defaults, and nothing written back.
  kc_json["spec"]["warmup"].erase("convergence");
  kc = KernelCacheFromJson(kc_json, &errors);
  EXPECT_EQ(kc.spec.warmup.convergence, ConvergenceSpec{});
  EXPECT_EQ(kc.spec.warmup.convergence.max_passes, 3);
  EXPECT_FALSE(KernelCacheToJson(kc)["spec"]["warmup"].contains("convergence"));

  kc_json["spec"]["warmup"]["convergence"] = {{"onNotConverged", "publish"}};
  errors.clear();
  KernelCacheFromJson(kc_json, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("spec.warmup.convergence.onNotConverged"), std::string::npos)
      << errors[0];
}

// status.fingerprints[].harvest.lastResult is decoded where the status is
// read: absent stays absent, a name becomes its HarvestOutcome, anything
// else is an error naming the field (and reads as absent).
TEST(ApiTypes, HarvestLastResultDecoded) {
  struct Case {
    std::string name;
    Json last_result;  // null: absent
    std::optional<HarvestOutcome> want;
    std::string error;  // "" = none
  };
  const std::vector<Case> cases = {
      {"absent", nullptr, std::nullopt, ""},
      {"merged", "Merged", HarvestOutcome::kMerged, ""},
      {"unchanged", "Unchanged", HarvestOutcome::kUnchanged, ""},
      {"failed", "Failed", HarvestOutcome::kFailed, ""},
      {"unknown", "Done", std::nullopt,
       "status.fingerprints[0].harvest.lastResult: \"Done\" is not one of Merged, Unchanged, "
       "Failed"},
      {"not a string", 1, std::nullopt,
       "status.fingerprints[0].harvest.lastResult: expected a string"},
  };
  for (const auto& c : cases) {
    Json harvest = {{"generation", 2}, {"job", "j"}};
    if (!c.last_result.is_null()) harvest["lastResult"] = c.last_result;
    const Json status = {
        {"fingerprints", Json::array({{{"id", "0123456789abcdef"}, {"harvest", harvest}}})}};
    std::vector<std::string> errors;
    const KernelCacheStatus st = StatusFromJson(status, &errors);
    ASSERT_TRUE(st.fingerprints[0].harvest.has_value()) << c.name;
    EXPECT_EQ(st.fingerprints[0].harvest->last_result, c.want) << c.name;
    if (c.error.empty()) {
      EXPECT_TRUE(errors.empty()) << c.name << ": " << errors.front();
      const Json back = StatusToJson(st)["fingerprints"][0]["harvest"];
      EXPECT_EQ(back.contains("lastResult") ? back["lastResult"] : Json(), c.last_result) << c.name;
    } else {
      ASSERT_EQ(errors.size(), 1u) << c.name;
      EXPECT_EQ(errors[0], c.error) << c.name;
    }
  }
}

}  // namespace
}  // namespace kc::core
