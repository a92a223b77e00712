// The CRD and the objects the operator builds, against a real API server
// (tests/cluster): the schema's defaults and CEL rules refuse what they
// should with messages that name the field, the status subresource takes
// what core/api_types writes, the printer columns show it, and the warmup
// Job, GC Job and PVC builders produce objects the server accepts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/api_types.h"
#include "operator/decide/warmup_job.h"
#include "testing/objects.h"
#include "tests/cluster/local_cluster_gtest.h"

namespace kc::op {
namespace {

using Json = nlohmann::json;

static auto* const kEnv = ::testing::AddGlobalTestEnvironment(new LocalClusterEnvironment());

LocalCluster& Cluster() { return *LocalClusterEnvironment::cluster(); }

void ApplyCrd() {
  static bool done = false;
  if (done) return;
  const Status s =
      Cluster().ApplyCrd(std::string(KC_SOURCE_DIR) + "/crds/kernelcache.kernelcache.io.yaml",
                         "kernelcaches.kernelcache.io");
  ASSERT_TRUE(s.ok()) << s;
  done = true;
}

Json Valid(const std::string& name) {
  return Json::parse(R"({
    "apiVersion": "kernelcache.io/v1alpha1", "kind": "KernelCache",
    "metadata": {"name": ")" +
                     name + R"(", "namespace": "default"},
    "spec": {
      "podSelector": {"matchLabels": {"app": "llama"}},
      "image": "registry.example/llama:1",
      "runtime": {"pytorch": "2.11.0"},
      "warmup": {"command": ["python3", "/app/warmup.py"],
                 "shapes": [{"batch": 1, "seqLen": 128}]},
      "storage": {"size": "20Gi"}}})");
}

TEST(CrdIntegration, ValidObjectGetsDefaults) {
  ApplyCrd();
  ASSERT_TRUE(Cluster().KubectlWithInput({"apply", "-f", "-"}, Valid("defaults").dump()).ok());
  std::string out;
  ASSERT_TRUE(Cluster().Kubectl({"get", "kcache", "defaults", "-o", "json"}, &out).ok());
  std::vector<std::string> errors;
  core::KernelCache kc = core::KernelCacheFromJson(Json::parse(out), &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(kc.spec.node_selector.at("nvidia.com/gpu.present"), "true");
  EXPECT_EQ(kc.spec.consume.mode, core::ConsumeMode::kCopy);
  EXPECT_EQ(kc.spec.consume.wait_timeout_seconds, 900);
  EXPECT_EQ(kc.spec.warmup.active_deadline_seconds, 1800);
  EXPECT_EQ(kc.spec.warmup.backoff_limit, 2);
  EXPECT_EQ(kc.spec.retention.stale_after, "24h");
  EXPECT_EQ(kc.spec.retention.absent_after, "168h");
  EXPECT_EQ(kc.spec.warmup.shapes[0]["seqLen"], 128);  // free-form objects preserved
}

TEST(CrdIntegration, InvalidObjectsAreRefusedNamingTheField) {
  ApplyCrd();
  struct Case {
    const char* name;
    const char* pointer;  // JSON pointer into the object
    Json value;           // null: remove
    const char* want;
  } cases[] = {
      {"both storages", "/spec/storage/existingClaim", "c", "spec.storage must set exactly one"},
      {"no storage", "/spec/storage/size", nullptr, "spec.storage must set exactly one"},
      {"empty podSelector", "/spec/podSelector", Json::object(),
       "spec.podSelector must set matchLabels or matchExpressions"},
      {"empty command", "/spec/warmup/command", Json::array(), "spec.warmup.command"},
      {"empty program", "/spec/warmup/command", Json::array({""}),
       "spec.warmup.command[0] must name a program"},
      {"deadline", "/spec/warmup/activeDeadlineSeconds", 10, "spec.warmup.activeDeadlineSeconds"},
      {"backoff", "/spec/warmup/backoffLimit", 11, "spec.warmup.backoffLimit"},
      {"wait", "/spec/consume/waitTimeoutSeconds", 0, "spec.consume.waitTimeoutSeconds"},
      {"mode", "/spec/consume/mode", "Link", "spec.consume.mode"},
      {"onTimeout", "/spec/consume/onTimeout", "Retry", "spec.consume.onTimeout"},
      {"verify", "/spec/consume/verify", "All", "spec.consume.verify"},
      {"staleAfter", "/spec/retention/staleAfter", "1d", "spec.retention.staleAfter"},
      {"maxBytes", "/spec/retention/maxBytes", "10GB", "spec.retention.maxBytes"},
      {"size", "/spec/storage/size", "lots", "spec.storage.size"},
      {"image", "/spec/image", "a b", "spec.image"},
      {"In without values", "/spec/podSelector/matchExpressions",
       Json::parse(R"([{"key": "a", "operator": "In"}])"),
       "spec.podSelector.matchExpressions[].values"},
      // Hostile values the schema used to accept: the
      // operator rejects them too, but the API server should not store them.
      {"size of 400 digits", "/spec/storage/size", std::string(400, '9'), "spec.storage.size"},
      {"maxBytes of 400 digits", "/spec/retention/maxBytes", std::string(400, '9') + "Gi",
       "spec.retention.maxBytes"},
      {"staleAfter overflowing", "/spec/retention/staleAfter", "999999999h",
       "spec.retention.staleAfter"},
      {"staleAfter over 10 years", "/spec/retention/staleAfter", "87601h",
       "spec.retention.staleAfter must be at most 87600h"},
      {"absentAfter", "/spec/retention/absentAfter", "7d", "spec.retention.absentAfter"},
      {"absentAfter over 10 years", "/spec/retention/absentAfter", "87601h",
       "spec.retention.absentAfter must be at most 87600h"},
      {"runAsUser root", "/spec/securityContext/runAsUser", 0, "spec.securityContext.runAsUser"},
      {"fsGroup beyond int32", "/spec/securityContext/fsGroup", 4294967296LL,
       "spec.securityContext.fsGroup"},
      {"purgeSchedule over 10 years", "/spec/retention/purgeSchedule", "87600h1s",
       "spec.retention.purgeSchedule must be at most 87600h"},
      {"long label value", "/spec/podSelector/matchLabels/app", std::string(64, 'a'),
       "spec.podSelector.matchLabels"},
      {"many node labels", "/spec/nodeSelector",
       [] {
         Json m = Json::object();
         for (int i = 0; i < 65; ++i) m["k" + std::to_string(i)] = "v";
         return m;
       }(),
       "spec.nodeSelector"},
      {"huge command", "/spec/warmup/command", Json(std::vector<std::string>(65, "x")),
       "spec.warmup.command"},
      {"long argument", "/spec/warmup/args", Json::array({std::string(5000, 'a')}),
       "spec.warmup.args[0]"},
      {"share without existingClaim", "/spec/storage/shareExistingClaim", true,
       "spec.storage.shareExistingClaim applies only with existingClaim"},
      {"share not a boolean", "/spec/storage/shareExistingClaim", "yes",
       "spec.storage.shareExistingClaim"},
      // The server form: one warmup form, no spec.image beside it, one
      // template source, known workload kinds, requests that name a path.
      {"command and server", "/spec/warmup/server",
       Json::parse(R"({"workloadRef": {"kind": "Deployment", "name": "d"},
                       "requests": [{"path": "/v1/completions"}]})"),
       "spec.warmup must set exactly one of command"},
      {"no image without server", "/spec/image", nullptr, "spec.image is required"},
      {"server beside spec.image", "/spec/warmup",
       Json::parse(R"({"server": {"workloadRef": {"kind": "Deployment", "name": "d"},
                                  "requests": [{"path": "/"}]}})"),
       "must be unset with spec.warmup.server"},
      {"workload kind", "/spec/warmup",
       Json::parse(R"({"server": {"workloadRef": {"kind": "DaemonSet", "name": "d"},
                                  "requests": [{"path": "/"}]}})"),
       "spec.warmup.server.workloadRef.kind"},
      {"two template sources", "/spec/warmup",
       Json::parse(R"({"server": {"workloadRef": {"kind": "Deployment", "name": "d"},
                                  "template": {"spec": {}}, "requests": [{"path": "/"}]}})"),
       "spec.warmup.server must set exactly one of workloadRef and template"},
      {"no requests", "/spec/warmup",
       Json::parse(R"({"server": {"workloadRef": {"kind": "Deployment", "name": "d"}}})"),
       "spec.warmup.server.requests"},
  };
  for (const auto& c : cases) {
    Json o = Valid("bad");
    const Json::json_pointer p(c.pointer);
    if (c.value.is_null()) {
      o[p.parent_pointer()].erase(p.back());
    } else {
      o[p] = c.value;
    }
    Status s = Cluster().KubectlWithInput({"apply", "--dry-run=server", "-f", "-"}, o.dump());
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_NE(s.message().find(c.want), std::string::npos) << c.name << ": " << s.message();
  }
}

// Every verify level `initwarm wait` accepts is accepted by the schema
// (Fingerprint and TargetArch were refused), and bounded values at their
// limits pass.
TEST(CrdIntegration, EveryVerifyLevelAndLimitValuesAreAccepted) {
  ApplyCrd();
  for (const char* level : {"Manifest", "Fingerprint", "Checksums", "TargetArch", "LoadTest"}) {
    Json o = Valid("levels");
    o["spec"]["consume"]["verify"] = level;
    o["spec"]["retention"]["staleAfter"] = "87600h";
    o["spec"]["podSelector"]["matchLabels"]["app"] = std::string(63, 'a');
    Status s = Cluster().KubectlWithInput({"apply", "--dry-run=server", "-f", "-"}, o.dump());
    EXPECT_TRUE(s.ok()) << level << ": " << s;
  }
}

// spec.storage.shareExistingClaim (the validating webhook's opt-in to one
// claim for several KernelCaches) is accepted with existingClaim and read
// back by the decoder.
TEST(CrdIntegration, ShareExistingClaimIsAcceptedWithExistingClaim) {
  ApplyCrd();
  Json o = Valid("shared");
  o["spec"]["storage"] = {{"existingClaim", "team-cache"}, {"shareExistingClaim", true}};
  ASSERT_TRUE(Cluster().KubectlWithInput({"apply", "-f", "-"}, o.dump()).ok());
  std::string out;
  ASSERT_TRUE(Cluster().Kubectl({"get", "kcache", "shared", "-o", "json"}, &out).ok());
  std::vector<std::string> errors;
  core::KernelCache kc = core::KernelCacheFromJson(Json::parse(out), &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(kc.spec.storage.existing_claim, "team-cache");
  EXPECT_TRUE(kc.spec.storage.share_existing_claim);
}

TEST(CrdIntegration, StatusSubresourceAndPrinterColumns) {
  ApplyCrd();
  ASSERT_TRUE(Cluster().KubectlWithInput({"apply", "-f", "-"}, Valid("cols").dump()).ok());
  core::KernelCacheStatus st;
  st.observed_generation = 1;
  st.phase = "Warming";
  st.ready_fingerprints = 1;
  st.total_fingerprints = 2;
  st.ready = "1/2";
  st.total_bytes = 1288490189;
  st.size = "1.2Gi";
  st.conditions = {
      {"Ready", "False", "FingerprintsNotReady", "1/2 ready", 1, std::chrono::system_clock::now()}};
  core::FingerprintStatus f;
  f.id = "3f9a1c2b7d4e5f60";
  f.state = "Ready";
  f.nodes = 2;
  f.ready_at = std::chrono::system_clock::now();
  f.job_uid = "u";
  st.fingerprints = {f};
  const Json patch = {{"status", core::StatusToJson(st)}};
  ASSERT_TRUE(Cluster()
                  .KubectlWithInput({"patch", "kcache", "cols", "--subresource=status",
                                     "--type=merge", "--patch-file=/dev/stdin"},
                                    patch.dump())
                  .ok());
  std::string out;
  ASSERT_TRUE(Cluster().Kubectl({"get", "kcache", "cols", "-o", "json"}, &out).ok());
  std::vector<std::string> errors;
  core::KernelCacheStatus back = core::StatusFromJson(Json::parse(out)["status"], &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(core::StatusToJson(back), core::StatusToJson(st));  // nothing pruned
  ASSERT_TRUE(Cluster().Kubectl({"get", "kcache", "cols"}, &out).ok());
  EXPECT_NE(out.find("READY"), std::string::npos) << out;
  EXPECT_NE(out.find("PHASE"), std::string::npos) << out;
  EXPECT_NE(out.find("SIZE"), std::string::npos) << out;
  EXPECT_NE(out.find("1/2"), std::string::npos) << out;
  EXPECT_NE(out.find("Warming"), std::string::npos) << out;
  EXPECT_NE(out.find("1.2Gi"), std::string::npos) << out;
  ASSERT_TRUE(Cluster().Kubectl({"get", "all"}, &out).ok());  // category "all"
  EXPECT_NE(out.find("kernelcache.kernelcache.io/cols"), std::string::npos) << out;
}

// A server-form KernelCache round-trips through the API server: no field of
// the template or the requests is pruned, defaults are applied.
TEST(CrdIntegration, ServerFormIsAcceptedAndKeptWhole) {
  ApplyCrd();
  Json o = Valid("server-form");
  o["spec"].erase("image");
  const Json server = Json::parse(R"({
    "template": {"metadata": {"labels": {"app": "x"}},
                 "spec": {"containers": [{"name": "s", "image": "i", "ports": [{"containerPort": 8000}],
                                          "resources": {"limits": {"nvidia.com/gpu": "2"}}}],
                          "volumes": [{"name": "models", "emptyDir": {}}]}},
    "container": "s", "port": 8000, "readinessPath": "/health",
    "parallel": {"tensor": 2, "pipeline": 1},
    "requests": [{"path": "/v1/completions", "method": "POST", "headers": {"X-A": "b"},
                  "body": {"model": "m", "max_tokens": 4}, "promptTokens": [8, 64]},
                 {"path": "/raw", "body": "text"}]})");
  o["spec"]["warmup"] = {{"server", server}};
  std::string out;
  ASSERT_TRUE(
      Cluster()
          .KubectlWithInput({"apply", "--dry-run=server", "-o", "json", "-f", "-"}, o.dump(), &out)
          .ok())
      << out;
  const Json back = Json::parse(out)["spec"]["warmup"]["server"];
  EXPECT_EQ(back["template"], server["template"]);
  EXPECT_EQ(back["requests"][0]["body"], server["requests"][0]["body"]);
  EXPECT_EQ(back["requests"][1]["body"], "text");
  EXPECT_EQ(back["requests"][0]["repeat"], 1);
  EXPECT_EQ(back["requestTimeoutSeconds"], 600);
  std::vector<std::string> errors;
  const core::KernelCacheSpec spec = core::SpecFromJson(Json::parse(out)["spec"], &errors);
  EXPECT_TRUE(errors.empty()) << errors[0];
  ASSERT_TRUE(spec.warmup.server.has_value());
  EXPECT_EQ(core::WarmupGpus(spec), 2);
}

TEST(CrdIntegration, BuiltObjectsAreAccepted) {
  core::KernelCache kc;
  kc.metadata.name = "llama";
  kc.metadata.namespace_ = "default";
  kc.metadata.uid = "00000000-0000-0000-0000-000000000001";
  kc.spec.image = "registry.example/llama:1";
  kc.spec.node_selector = {{"nvidia.com/gpu.present", "true"}};
  kc.spec.tolerations = {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}};
  kc.spec.warmup.command = {"python3", "/app/warmup.py"};
  kc.spec.warmup.env = {{{"name", "HF_HOME"}, {"value", "/tmp"}}};
  kc.spec.warmup.shapes = {{{"batch", 1}}};
  kc.spec.storage.size = "20Gi";
  Settings s;
  const std::vector<Json> objects = {
      BuildWarmupJob(kc, "3f9a1c2b7d4e5f60", testutil::H200Facts(), 2,
                     {{{"nvidia.com/gpu.product", "NVIDIA-H200"}, {"kubernetes.io/arch", "amd64"}},
                      {{"nvidia.com/gpu.product", "NVIDIA-H200-SHARED"}}},
                     s),
      BuildGcJob(kc, {{"0123456789abcdef", ""}}, s), BuildPvc(kc)};
  for (const auto& o : objects) {
    Status st = Cluster().KubectlWithInput({"create", "--dry-run=server", "-f", "-"}, o.dump());
    EXPECT_TRUE(st.ok()) << o["kind"] << " " << o["metadata"]["name"] << ": " << st;
  }
}

}  // namespace
}  // namespace kc::op
