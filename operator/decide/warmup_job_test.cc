#include "operator/decide/warmup_job.h"

#include <gtest/gtest.h>

#include "operator/decide/names.h"
#include "testing/objects.h"

namespace kc::op {
namespace {

core::KernelCache Kc() {
  core::KernelCache kc = testutil::KernelCacheNamed();
  kc.spec.image = "registry.example/llama@sha256:abc";
  kc.spec.node_selector = {{"nvidia.com/gpu.present", "true"}};
  kc.spec.tolerations = {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}};
  kc.spec.warmup.command = {"python3", "/app/warmup.py"};
  kc.spec.warmup.args = {"--fast"};
  kc.spec.warmup.env = {{{"name", "HF_HOME"}, {"value", "/tmp"}},
                        {{"name", "TRITON_CACHE_DIR"}, {"value", "/elsewhere"}}};
  kc.spec.warmup.shapes = {{{"batch", 1}}, {{"batch", 8}}};
  kc.spec.warmup.resources = {{"limits", {{"memory", "16Gi"}, {"nvidia.com/gpu", "4"}}}};
  kc.spec.warmup.active_deadline_seconds = 900;
  kc.spec.warmup.backoff_limit = 1;
  kc.spec.storage.storage_class_name = "nfs";
  return kc;
}

const Json* FindByName(const Json& list, const std::string& name) {
  for (const auto& e : list) {
    if (e.value("name", "") == name) return &e;
  }
  return nullptr;
}

TEST(WarmupJob, Shape) {
  Settings settings;
  settings.initwarm_image = "ghcr.io/kc/initwarm:1";
  std::vector<std::map<std::string, std::string>> sets = {
      {{"nvidia.com/gpu.product", "NVIDIA-H200"}, {"nvidia.com/gpu.compute.major", "9"}}};
  Json job = BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, settings);
  EXPECT_EQ(job["metadata"]["name"], "llama-warm-3f9a1c2b7d4e5f60");
  EXPECT_EQ(job["metadata"]["namespace"], "ml");
  EXPECT_EQ(job["metadata"]["labels"][kLabelName], "llama");
  EXPECT_EQ(job["metadata"]["labels"][kLabelFingerprint], "3f9a1c2b7d4e5f60");
  EXPECT_EQ(job["metadata"]["annotations"][kAnnotationFingerprint], "3f9a1c2b7d4e5f60");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["uid"], "kc-uid");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(job["spec"]["backoffLimit"], 1);
  EXPECT_EQ(job["spec"]["activeDeadlineSeconds"], 900);
  const Json& pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"][kLabelFingerprint], "3f9a1c2b7d4e5f60");
  EXPECT_FALSE(job["spec"]["template"]["metadata"].contains("annotations"))
      << "no spec.warmup.podAnnotations: the pod carries none, as before the field existed";
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.present"], "true");
  EXPECT_EQ(pod["tolerations"][0]["key"], "nvidia.com/gpu");

  ASSERT_EQ(pod["initContainers"].size(), 2u);
  const Json& prepare = pod["initContainers"][0];
  EXPECT_EQ(prepare["name"], "prepare");
  EXPECT_EQ(prepare["image"], "ghcr.io/kc/initwarm:1");
  EXPECT_EQ(prepare["args"][0], "prepare");
  EXPECT_NE(std::find(prepare["args"].begin(), prepare["args"].end(),
                      Json("--fingerprint=3f9a1c2b7d4e5f60")),
            prepare["args"].end());

  const Json& warmup = pod["initContainers"][1];
  EXPECT_EQ(warmup["image"], "registry.example/llama@sha256:abc");
  // Run through the convergence runner prepare installs (the default
  // convergence: 3 passes); the user's command after "--", its args after.
  EXPECT_EQ(warmup["command"], Json::array({"/var/run/kernelcache/bin/kc-converge",
                                            "--max-passes=3", "--view=/var/run/kernelcache/view",
                                            "--record=/var/run/kernelcache/convergence.json", "--",
                                            "python3", "/app/warmup.py"}));
  EXPECT_EQ(warmup["args"][0], "--fast");
  EXPECT_EQ(warmup["resources"]["limits"]["nvidia.com/gpu"], "1");
  EXPECT_EQ(warmup["resources"]["limits"]["memory"], "16Gi");
  const Json& env = warmup["env"];
  ASSERT_NE(FindByName(env, "HF_HOME"), nullptr);
  EXPECT_EQ((*FindByName(env, "TRITON_CACHE_DIR"))["value"], "/var/run/kernelcache/view/triton");
  int triton = 0;
  for (const auto& e : env) triton += e["name"] == "TRITON_CACHE_DIR";
  EXPECT_EQ(triton, 1);  // the user's value is replaced, not duplicated
  EXPECT_EQ((*FindByName(env, "TRITON_CACHE_AUTOTUNING"))["value"], "1");
  EXPECT_EQ((*FindByName(env, "CUDA_CACHE_MAXSIZE"))["value"], "4294967296");
  EXPECT_EQ(Json::parse((*FindByName(env, "KC_WARMUP_SHAPES"))["value"].get<std::string>()),
            Json::parse(R"([{"batch":1},{"batch":8}])"));

  ASSERT_EQ(pod["containers"].size(), 1u);
  const Json& seal = pod["containers"][0];
  EXPECT_EQ(seal["name"], kSealContainer);
  EXPECT_EQ(seal["args"][0], "seal");
  EXPECT_EQ(seal["terminationMessagePath"], "/dev/termination-log");
  EXPECT_NE(std::find(seal["args"].begin(), seal["args"].end(), Json("--replace")),
            seal["args"].end());
  // seal recomputes the fingerprint from these and refuses a mismatch.
  const Json node =
      Json::parse((*FindByName(seal["env"], "KC_NODE_FACTS"))["value"].get<std::string>());
  EXPECT_EQ(node["gpuProduct"], "NVIDIA-H200");
  EXPECT_EQ(node["driver"], "580.159.04");
  const Json runtime =
      Json::parse((*FindByName(seal["env"], "KC_RUNTIME_FACTS"))["value"].get<std::string>());
  EXPECT_EQ(runtime["image"], "registry.example/llama@sha256:abc");
  EXPECT_EQ((*FindByName(seal["env"], "KC_JOB_UID"))["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.labels['batch.kubernetes.io/controller-uid']");

  EXPECT_EQ((*FindByName(pod["volumes"], "cache"))["persistentVolumeClaim"]["claimName"],
            "llama-cache");
  EXPECT_TRUE((*FindByName(pod["volumes"], "run")).contains("emptyDir"));
}

bool HasArg(const Json& c, const std::string& arg) {
  return std::find(c["args"].begin(), c["args"].end(), Json(arg)) != c["args"].end();
}

TEST(WarmupJob, ConvergencePassesWireRunnerRecordAndPolicy) {
  std::vector<std::map<std::string, std::string>> sets = {{{"nvidia.com/gpu.present", "true"}}};
  core::KernelCache kc = Kc();
  kc.spec.warmup.convergence.max_passes = 5;
  kc.spec.warmup.convergence.on_not_converged = core::NotConvergedPolicy::kFail;
  Json job = BuildWarmupJob(kc, "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, Settings{});
  const Json& pod = job["spec"]["template"]["spec"];
  const Json& prepare = pod["initContainers"][0];
  const Json& warmup = pod["initContainers"][1];
  const Json& seal = pod["containers"][0];
  EXPECT_TRUE(HasArg(prepare, "--install-runner=/var/run/kernelcache/bin/kc-converge"));
  EXPECT_EQ(warmup["command"][1], "--max-passes=5");
  EXPECT_TRUE(HasArg(seal, "--convergence-record=/var/run/kernelcache/convergence.json"));
  EXPECT_TRUE(HasArg(seal, "--on-not-converged=Fail"));

  // maxPasses 0: the user's command as it is, nothing installed or read.
  kc.spec.warmup.convergence.max_passes = 0;
  job = BuildWarmupJob(kc, "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, Settings{});
  const Json& once = job["spec"]["template"]["spec"];
  EXPECT_EQ(once["initContainers"][1]["command"], Json::array({"python3", "/app/warmup.py"}));
  for (const auto& a : once["initContainers"][0]["args"]) {
    EXPECT_FALSE(a.get<std::string>().starts_with("--install-runner")) << a;
  }
  for (const auto& a : once["containers"][0]["args"]) {
    EXPECT_FALSE(a.get<std::string>().starts_with("--convergence-record")) << a;
  }
}

TEST(WarmupJob, PodAnnotations) {
  core::KernelCache kc = Kc();
  kc.spec.warmup.pod_annotations = {{"sidecar.istio.io/inject", "false"}};
  Json job = BuildWarmupJob(kc, "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0,
                            {{{"nvidia.com/gpu.product", "NVIDIA-H200"}}}, Settings{});
  EXPECT_EQ(job["spec"]["template"]["metadata"]["annotations"],
            Json({{"sidecar.istio.io/inject", "false"}}));
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"][kLabelFingerprint], "3f9a1c2b7d4e5f60");
  EXPECT_FALSE(job["metadata"]["annotations"].contains("sidecar.istio.io/inject"))
      << "the pod's, not the Job's";
}

TEST(WarmupJob, AffinityOrsLabelSetsAndExcludesDriverUpgrades) {
  std::vector<std::map<std::string, std::string>> sets = {
      {{"nvidia.com/gpu.product", "NVIDIA-H200"}},
      {{"nvidia.com/gpu.product", "NVIDIA-H200-SHARED"}}};
  Json job = BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", testutil::H200Facts(), 1, sets, Settings{});
  EXPECT_EQ(job["metadata"]["name"], "llama-warm-3f9a1c2b7d4e5f60-g1");
  const Json& terms = job["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
                         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 4u);  // two per label set
  const Json& absent = terms[0]["matchExpressions"];
  EXPECT_EQ(absent[0]["key"], "nvidia.com/gpu.product");
  EXPECT_EQ(absent[0]["operator"], "In");
  EXPECT_EQ(absent[0]["values"], Json::array({"NVIDIA-H200"}));
  EXPECT_EQ(absent[1]["key"], "nvidia.com/gpu-driver-upgrade-state");
  EXPECT_EQ(absent[1]["operator"], "DoesNotExist");
  const Json& done = terms[1]["matchExpressions"];
  EXPECT_EQ(done[1]["operator"], "In");
  EXPECT_EQ(done[1]["values"], Json::array({"", "upgrade-done"}));
  EXPECT_EQ(terms[2]["matchExpressions"][0]["values"], Json::array({"NVIDIA-H200-SHARED"}));
}

TEST(WarmupJob, PrepareBreaksLocksOfDeadOwnersOnly) {
  std::vector<std::map<std::string, std::string>> sets = {{{"nvidia.com/gpu.product", "X"}}};
  Json none = BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, Settings{});
  for (const auto& a : none["spec"]["template"]["spec"]["initContainers"][0]["args"]) {
    EXPECT_EQ(a.get<std::string>().find("--break-lock-of"), std::string::npos) << a;
  }
  Json job = BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, Settings{},
                            {"u1", "u2"});
  const Json& args = job["spec"]["template"]["spec"]["initContainers"][0]["args"];
  EXPECT_EQ(args.back(), "--break-lock-of=u1,u2");
}

TEST(WarmupJob, GcJob) {
  const std::string digest(64, 'd');
  Json job = BuildGcJob(Kc(), {{"cccc", digest}, {"aaaa", ""}}, Settings{});
  EXPECT_EQ(job["metadata"]["name"], GcJobName("llama", {"aaaa", "cccc"}));
  EXPECT_EQ(job["metadata"]["labels"][kLabelComponent], "gc");
  EXPECT_EQ(job["metadata"]["annotations"][kAnnotationGcIds], "aaaa,cccc");
  const Json& c = job["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["args"], Json::array({"gc", "--root=/var/cache/kernelcache", "--remove=aaaa",
                                    "--remove=cccc:" + digest}));
}

// Warmup and GC pods run as the KernelCache's uid with the cache group,
// every container non-root without privileges (core/security_context.h).
TEST(WarmupJob, PodsRunAsTheCacheUserAndGroup) {
  struct Case {
    const char* name;
    std::optional<int64_t> fs_group, run_as_user;
    int64_t want_uid, want_gid;
  } cases[] = {
      {"defaults", std::nullopt, std::nullopt, 65532, 65532},
      {"spec.securityContext set", 2000, 1000, 1000, 2000},
  };
  std::vector<std::map<std::string, std::string>> sets = {{{"nvidia.com/gpu.product", "X"}}};
  for (const auto& c : cases) {
    core::KernelCache kc = Kc();
    kc.spec.security_context.fs_group = c.fs_group;
    kc.spec.security_context.run_as_user = c.run_as_user;
    for (const Json& job :
         {BuildWarmupJob(kc, "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, Settings{}),
          BuildGcJob(kc, {{"aaaa", ""}}, Settings{})}) {
      const std::string what =
          std::string(c.name) + " " + job["metadata"]["name"].get<std::string>();
      const Json& pod = job["spec"]["template"]["spec"];
      const Json& sc = pod["securityContext"];
      EXPECT_EQ(sc["runAsUser"], c.want_uid) << what;
      EXPECT_EQ(sc["runAsGroup"], c.want_gid) << what;
      EXPECT_EQ(sc["fsGroup"], c.want_gid) << what;
      EXPECT_EQ(sc["fsGroupChangePolicy"], "OnRootMismatch") << what;
      EXPECT_EQ(sc["runAsNonRoot"], true) << what;
      EXPECT_EQ(sc["seccompProfile"]["type"], "RuntimeDefault") << what;
      size_t containers = 0;
      for (const char* list : {"initContainers", "containers"}) {
        if (!pod.contains(list)) continue;
        for (const Json& ctr : pod[list]) {
          ++containers;
          const Json& csc = ctr["securityContext"];
          EXPECT_EQ(csc["allowPrivilegeEscalation"], false) << what << " " << ctr["name"];
          EXPECT_EQ(csc["capabilities"]["drop"], Json::array({"ALL"}))
              << what << " " << ctr["name"];
          EXPECT_EQ(csc["runAsNonRoot"], true) << what << " " << ctr["name"];
        }
      }
      EXPECT_EQ(containers, job["metadata"]["labels"][kLabelComponent] == "gc" ? 1u : 3u) << what;
    }
  }
}

TEST(WarmupJob, PriorityClassFromSettings) {
  std::vector<std::map<std::string, std::string>> sets = {{{"nvidia.com/gpu.product", "X"}}};
  Settings settings;
  Json none = BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, settings);
  EXPECT_FALSE(none["spec"]["template"]["spec"].contains("priorityClassName"));
  settings.warmup_priority_class = "kernelcache-warmup";
  Json job = BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, settings);
  EXPECT_EQ(job["spec"]["template"]["spec"]["priorityClassName"], "kernelcache-warmup");
  // GC pods need no GPU and preempt nothing.
  Json gc = BuildGcJob(Kc(), {{"aaaa", ""}}, settings);
  EXPECT_FALSE(gc["spec"]["template"]["spec"].contains("priorityClassName"));
}

// The user's warmup image gets no API token unless an account is named.
TEST(WarmupJob, NoServiceAccountTokenUnlessAnAccountIsNamed) {
  std::vector<std::map<std::string, std::string>> sets = {{{"nvidia.com/gpu.product", "X"}}};
  Settings settings;
  for (const Json& job :
       {BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, settings),
        BuildGcJob(Kc(), {{"aaaa", ""}}, settings)}) {
    const Json& pod = job["spec"]["template"]["spec"];
    EXPECT_EQ(pod["automountServiceAccountToken"], false);
    EXPECT_FALSE(pod.contains("serviceAccountName"));
  }
  settings.service_account = "warmup-reader";
  for (const Json& job :
       {BuildWarmupJob(Kc(), "3f9a1c2b7d4e5f60", testutil::H200Facts(), 0, sets, settings),
        BuildGcJob(Kc(), {{"aaaa", ""}}, settings)}) {
    const Json& pod = job["spec"]["template"]["spec"];
    EXPECT_EQ(pod["serviceAccountName"], "warmup-reader");
    EXPECT_FALSE(pod.contains("automountServiceAccountToken"));
  }
}

TEST(WarmupJob, Pvc) {
  Json pvc = BuildPvc(Kc());
  EXPECT_EQ(pvc["metadata"]["name"], "llama-cache");
  EXPECT_EQ(pvc["spec"]["accessModes"], Json::array({"ReadWriteMany"}));
  EXPECT_EQ(pvc["spec"]["storageClassName"], "nfs");
  EXPECT_EQ(pvc["spec"]["resources"]["requests"]["storage"], "20Gi");
  EXPECT_EQ(pvc["metadata"]["ownerReferences"][0]["kind"], "KernelCache");
}

}  // namespace
}  // namespace kc::op
