#include "operator/decide/server_warmup_job.h"

#include <gtest/gtest.h>

#include "core/manifest.h"
#include "core/warmup_plan.h"
#include "operator/decide/warmup_job.h"
#include "testing/objects.h"

namespace kc::op {
namespace {

Json ServerContainer() {
  return {{"name", "server"},
          {"image", "registry.example/srv@sha256:abc"},
          {"command", {"python3", "/app/serve.py"}},
          {"args", {"--ranks", "2"}},
          {"env",
           {{{"name", "MODEL"}, {"value", "m"}},
            {{"name", "TRITON_CACHE_DIR"}, {"value", "/home/.triton"}},
            {{"name", "KC_FINGERPRINT"}, {"value", "forged"}}}},
          {"ports", {{{"name", "http"}, {"containerPort", 8000}, {"hostPort", 80}}}},
          {"readinessProbe", {{"httpGet", {{"path", "/ready"}, {"port", "http"}}}}},
          {"livenessProbe", {{"httpGet", {{"path", "/live"}, {"port", 8000}}}}},
          {"startupProbe", {{"tcpSocket", {{"port", 8000}}}}},
          {"volumeMounts", {{{"name", "models"}, {"mountPath", "/models"}}}},
          {"resources", {{"limits", {{"nvidia.com/gpu", "2"}, {"memory", "8Gi"}}}}}};
}

core::KernelCache Kc() {
  core::KernelCache kc = testutil::KernelCacheNamed("srv");
  kc.spec.node_selector = {{"nvidia.com/gpu.present", "true"}};
  kc.spec.tolerations = {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}};
  kc.spec.warmup.active_deadline_seconds = 900;
  core::ServerSpec s;
  s.pod_template = {
      {"metadata", {{"labels", {{"app", "srv"}}}, {"annotations", {{"a", "b"}}}}},
      {"spec",
       {{"initContainers", {{{"name", "fetch"}, {"image", "busybox"}}}},
        {"containers", {ServerContainer(), {{"name", "log"}, {"image", "busybox"}}}},
        {"volumes", {{{"name", "models"}, {"persistentVolumeClaim", {{"claimName", "models"}}}}}},
        {"nodeSelector", {{"pool", "a"}}},
        {"tolerations", {{{"key", "dedicated"}, {"operator", "Exists"}}}},
        {"affinity", {{"podAntiAffinity", Json::object()}}},
        {"runtimeClassName", "nvidia"},
        {"imagePullSecrets", {{{"name", "pull"}}}},
        {"serviceAccountName", "srv-sa"},
        {"hostname", "srv-0"},
        {"restartPolicy", "Always"},
        {"securityContext", {{"runAsUser", 0}}}}}};
  core::WarmupRequest r;
  r.path = "/v1/completions";
  r.body = {{"model", "m"}};
  r.prompt_tokens = {8, 32};
  s.requests = {r};
  s.request_timeout_seconds = 120;
  kc.spec.warmup.server = s;
  return kc;
}

const Json* Named(const Json& list, const std::string& name) {
  for (const auto& e : list) {
    if (e.value("name", "") == name) return &e;
  }
  return nullptr;
}

std::string EnvValue(const Json& c, const std::string& name) {
  const Json* e = Named(c["env"], name);
  return e != nullptr && e->contains("value") ? (*e)["value"].get<std::string>() : "";
}

const std::vector<std::map<std::string, std::string>> kSets = {
    {{"nvidia.com/gpu.product", "NVIDIA-H200"}}};
const core::NodeFacts kH200 = testutil::H200Facts();

Json Pod(const core::KernelCache& kc, const Settings& settings = {}) {
  return BuildWarmupJob(kc, "3f9a1c2b7d4e5f60", kH200, 0, kSets,
                        settings)["spec"]["template"]["spec"];
}

TEST(ServerWarmupPod, ContainersInOrder) {
  const Json pod = Pod(Kc());
  std::vector<std::string> inits;
  for (const auto& c : pod["initContainers"]) inits.push_back(c["name"]);
  EXPECT_EQ(inits, (std::vector<std::string>{"prepare", "fetch", "server", "log"}));
  ASSERT_EQ(pod["containers"].size(), 1u);
  EXPECT_EQ(pod["containers"][0]["name"], "seal");
  EXPECT_EQ(pod["restartPolicy"], "Never");
  // The template's own init container runs once; its containers run beside
  // the driver and stop when it exits.
  EXPECT_FALSE(pod["initContainers"][1].contains("restartPolicy"));
  EXPECT_EQ(pod["initContainers"][2]["restartPolicy"], "Always");
  EXPECT_EQ(pod["initContainers"][3]["restartPolicy"], "Always");
}

TEST(ServerWarmupPod, TheServerKeepsItsSelfButNotItsProbesOrHostPorts) {
  const Json pod = Pod(Kc());
  const Json& srv = *Named(pod["initContainers"], "server");
  EXPECT_EQ(srv["image"], "registry.example/srv@sha256:abc");
  EXPECT_EQ(srv["command"], Json({"python3", "/app/serve.py"}));
  EXPECT_EQ(srv["args"], Json({"--ranks", "2"}));
  EXPECT_EQ(srv["resources"]["limits"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(EnvValue(srv, "MODEL"), "m");
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    EXPECT_FALSE(srv.contains(probe)) << probe;
  }
  EXPECT_FALSE(srv["ports"][0].contains("hostPort"));
  EXPECT_EQ(srv["ports"][0]["containerPort"], 8000);
  // The cache view over the template's own, our fingerprint over a forged one.
  EXPECT_EQ(EnvValue(srv, "TRITON_CACHE_DIR"), "/var/run/kernelcache/view/triton");
  EXPECT_EQ(EnvValue(srv, "KC_FINGERPRINT"), "3f9a1c2b7d4e5f60");
  int fingerprints = 0;
  for (const auto& e : srv["env"]) fingerprints += e["name"] == "KC_FINGERPRINT" ? 1 : 0;
  EXPECT_EQ(fingerprints, 1);
  EXPECT_NE(Named(srv["volumeMounts"], "models"), nullptr);
  EXPECT_EQ((*Named(srv["volumeMounts"], "kc-cache"))["mountPath"], "/var/cache/kernelcache");
  EXPECT_EQ((*Named(srv["volumeMounts"], "kc-run"))["mountPath"], "/var/run/kernelcache");
  EXPECT_EQ(srv["securityContext"]["allowPrivilegeEscalation"], false);
}

TEST(ServerWarmupPod, TheDriverSealsAfterThePlan) {
  Settings settings;
  settings.initwarm_image = "ghcr.io/kc/initwarm:1";
  const Json pod = Pod(Kc(), settings);
  const Json& seal = pod["containers"][0];
  EXPECT_EQ(seal["image"], "ghcr.io/kc/initwarm:1");
  const std::vector<std::string> args = seal["args"];
  ASSERT_GE(args.size(), 8u);
  EXPECT_EQ(args[0], "drive");
  EXPECT_EQ(args[1], "--port=8000");  // the readiness probe's named port
  EXPECT_EQ(args[2], "--ready-path=/ready");
  EXPECT_NE(std::find(args.begin(), args.end(), "--timeout=810"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--request-timeout=120"), args.end());
  auto dashdash = std::find(args.begin(), args.end(), "--");
  ASSERT_NE(dashdash, args.end());
  ASSERT_NE(dashdash + 1, args.end());
  EXPECT_EQ(*(dashdash + 1), "seal");
  EXPECT_EQ(std::count(args.begin(), args.end(), "seal"), 1) << "one seal command";
  EXPECT_NE(std::find(dashdash, args.end(), "--fingerprint=3f9a1c2b7d4e5f60"), args.end());
  EXPECT_NE(std::find(dashdash, args.end(), "--replace"), args.end());
  auto plan = core::ParseWarmupCalls(EnvValue(seal, "KC_WARMUP_REQUESTS"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ((*plan)[1].label, "requests[0] prompt=32");
  auto runtime = core::ParseRuntimeFacts(EnvValue(seal, "KC_RUNTIME_FACTS"));
  ASSERT_TRUE(runtime.ok()) << runtime.status().message();
  EXPECT_EQ(runtime->image, "registry.example/srv@sha256:abc");
  EXPECT_EQ(runtime->gpus, 2);
  EXPECT_EQ(runtime->server.size(), 64u);
  EXPECT_FALSE(seal["resources"]["limits"].contains("nvidia.com/gpu"))
      << "the driver holds no GPU: the pod asks for the template's count, not one more";
}

// Convergence passes (the default 3): the driver restarts the server by
// ending the processes that carry the marker, so the pod shares its
// process namespace; the driver and the seal both get the record's path.
TEST(ServerWarmupPod, ConvergencePassesShareTheProcessNamespaceAndMarkTheServer) {
  const Json pod = Pod(Kc());
  EXPECT_EQ(pod["shareProcessNamespace"], true);
  const Json& server = pod["initContainers"][2];
  EXPECT_EQ(EnvValue(server, "KC_WARMUP_SERVER"), "1");
  EXPECT_EQ(EnvValue(pod["initContainers"][3], "KC_WARMUP_SERVER"), "1");       // every container
  for (const auto& e : pod["initContainers"][1].value("env", Json::array())) {  // runs once
    EXPECT_NE(e["name"], "KC_WARMUP_SERVER");
  }
  const std::vector<std::string> args = pod["containers"][0]["args"];
  auto dashdash = std::find(args.begin(), args.end(), "--");
  EXPECT_NE(std::find(args.begin(), dashdash, "--max-passes=3"), dashdash);
  EXPECT_NE(std::find(args.begin(), dashdash,
                      "--convergence-record=/var/run/kernelcache/convergence.json"),
            dashdash);
  EXPECT_NE(
      std::find(dashdash, args.end(), "--convergence-record=/var/run/kernelcache/convergence.json"),
      args.end());
  EXPECT_NE(std::find(dashdash, args.end(), "--on-not-converged=Publish"), args.end());

  core::KernelCache once = Kc();
  once.spec.warmup.convergence.max_passes = 0;
  const Json plain = Pod(once);
  EXPECT_FALSE(plain.contains("shareProcessNamespace"));
  for (const auto& e : plain["initContainers"][2]["env"]) EXPECT_NE(e["name"], "KC_WARMUP_SERVER");
  for (const auto& a : plain["containers"][0]["args"]) {
    EXPECT_FALSE(a.get<std::string>().starts_with("--max-passes")) << a;
  }
}

TEST(ServerWarmupPod, PodFieldsKeptMergedAndDropped) {
  Settings settings;
  settings.warmup_priority_class = "kernelcache-warmup";
  const Json pod = Pod(Kc(), settings);
  EXPECT_EQ(pod["runtimeClassName"], "nvidia");
  EXPECT_EQ(pod["imagePullSecrets"][0]["name"], "pull");
  EXPECT_EQ(pod["serviceAccountName"], "srv-sa");
  EXPECT_NE(Named(pod["volumes"], "models"), nullptr);
  EXPECT_EQ((*Named(pod["volumes"], "kc-cache"))["persistentVolumeClaim"]["claimName"],
            "srv-cache");
  EXPECT_NE(Named(pod["volumes"], "kc-run"), nullptr);
  EXPECT_EQ(pod["nodeSelector"]["pool"], "a");
  EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.present"], "true");
  EXPECT_EQ(pod["tolerations"].size(), 2u);
  EXPECT_EQ(pod["priorityClassName"], "kernelcache-warmup");
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_FALSE(pod.contains("hostname"));
  EXPECT_TRUE(pod["affinity"].contains("nodeAffinity"));
  EXPECT_FALSE(pod["affinity"].contains("podAntiAffinity"));
  EXPECT_NE(pod["securityContext"]["runAsUser"], 0) << "the warmup uid, not the template's root";
  const Json job = BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", kH200, 0, kSets, settings);
  EXPECT_FALSE(job["spec"]["template"]["metadata"]["labels"].contains("app"))
      << "no Service selects the warmup pod";
}

TEST(ServerWarmupPod, WithoutAServiceAccountTheOperatorsPolicy) {
  core::KernelCache kc = Kc();
  kc.spec.warmup.server->pod_template["spec"].erase("serviceAccountName");
  EXPECT_EQ(Pod(kc)["automountServiceAccountToken"], false);
}

// A template that does not hold what it should never crashes the builder.
TEST(ServerWarmupPod, HostileTemplates) {
  const Json templates[] = {nullptr,
                            Json::object(),
                            {{"spec", "x"}},
                            {{"spec", {{"containers", "x"}}}},
                            {{"spec", {{"containers", {1, "a", nullptr}}}}},
                            {{"spec", {{"containers", {{{"ports", "x"}, {"env", 3}}}}}}}};
  for (const auto& t : templates) {
    core::KernelCache kc = Kc();
    kc.spec.warmup.server->pod_template = t;
    const Json pod = Pod(kc);
    EXPECT_EQ(pod["containers"][0]["name"], "seal") << t.dump();
    EXPECT_EQ(pod["initContainers"][0]["name"], "prepare") << t.dump();
  }
}

}  // namespace
}  // namespace kc::op
