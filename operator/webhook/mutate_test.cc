#include "operator/webhook/mutate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "core/cache_env.h"
#include "core/gate_report.h"
#include "core/security_context.h"
#include "operator/webhook/json_patch.h"
#include "testing/objects.h"

namespace kc::webhook {
namespace {

const InjectSettings kSettings = {"registry.example/initwarm:0.4.0",
                                  "http://kernelcache-operator.kernelcache-system.svc:8080",
                                  "kernelcache-system", "0.4.0"};

core::KernelCache Kc(const std::string& name, std::map<std::string, std::string> match,
                     core::ConsumeMode mode = core::ConsumeMode::kCopy) {
  core::KernelCache kc = testutil::KernelCacheNamed(name);
  kc.spec.pod_selector.match_labels = std::move(match);
  kc.spec.consume.mode = mode;
  kc.spec.image = "vllm/vllm-openai:v0.11.0";  // what Pod() runs
  return kc;
}

Json Pod(std::map<std::string, std::string> labels = {{"app", "llama"}}) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "llama-0"}, {"namespace", "ml"}, {"labels", labels}}},
      {"spec",
       {{"containers", Json::array({{{"name", "server"},
                                     {"image", "vllm/vllm-openai:v0.11.0"},
                                     {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}})}}}};
}

const Json* Find(const Json& list, const std::string& name) {
  for (const Json& e : list) {
    if (e.value("name", "") == name) return &e;
  }
  return nullptr;
}

const Json* FindMount(const Json& container, const std::string& path) {
  for (const Json& m : container["volumeMounts"]) {
    if (m.value("mountPath", "") == path) return &m;
  }
  return nullptr;
}

// Applies the result's own patch to the input: it must give the mutated pod.
void ExpectPatchGivesPod(const Json& in, const MutationResult& r) {
  auto applied = ApplyPatch(in, r.patch);
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(*applied, r.pod) << "patch " << r.patch.dump();
}

TEST(MutateTest, MatchingPodGetsGateVolumesEnvAndAnnotations) {
  const Json in = Pod();
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_EQ(r.kernelcache, "llama");
  EXPECT_TRUE(r.skipped.empty()) << r.skipped;
  EXPECT_TRUE(r.conflicts.empty());
  EXPECT_TRUE(r.events.empty());
  ExpectPatchGivesPod(in, r);
  const Json& spec = r.pod["spec"];
  ASSERT_EQ(spec["initContainers"].size(), 1u);
  EXPECT_EQ(spec["initContainers"][0]["name"], "kernelcache-wait");
  const Json* cache = Find(spec["volumes"], "kernelcache-cache");
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ((*cache)["persistentVolumeClaim"]["claimName"], "llama-cache");
  const Json* run = Find(spec["volumes"], "kernelcache-run");
  ASSERT_NE(run, nullptr);
  EXPECT_EQ((*run)["emptyDir"], Json::object());
  const Json& server = spec["containers"][0];
  for (const auto& [name, value] : core::CacheViewEnv()) {
    const Json* e = Find(server["env"], name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ((*e)["value"], value);
  }
  ASSERT_NE(FindMount(server, "/var/run/kernelcache"), nullptr);
  ASSERT_NE(FindMount(server, "/var/cache/kernelcache"), nullptr);
  const Json& a = r.pod["metadata"]["annotations"];
  EXPECT_EQ(a["kernelcache.io/injected"], "llama");
  EXPECT_EQ(a["kernelcache.io/consume-mode"], "Copy");
  EXPECT_EQ(a["kernelcache.io/injector-version"], "0.4.0");
  EXPECT_FALSE(a.contains("kernelcache.io/injection-conflicts"));
  // No annotations before: the patch adds the whole map.
  bool adds_annotations = false;
  for (const Json& op : r.patch) {
    adds_annotations |= op["op"] == "add" && op["path"] == "/metadata/annotations";
  }
  EXPECT_TRUE(adds_annotations) << r.patch.dump();
}

// Read-only in every mode (the volume and every mount): SharedReadWrite is
// deprecated and behaves as Shared, so no serving pod writes the cache.
TEST(MutateTest, ClaimIsReadOnlyInEveryMode) {
  struct Case {
    core::ConsumeMode mode;
    bool read_only;
  } cases[] = {{core::ConsumeMode::kCopy, true},
               {core::ConsumeMode::kShared, true},
               {core::ConsumeMode::kSharedReadWrite, true}};
  for (const auto& c : cases) {
    auto r = Mutate(Pod(), "ml", {Kc("llama", {{"app", "llama"}}, c.mode)}, kSettings);
    const Json& spec = r.pod["spec"];
    const Json* vol = Find(spec["volumes"], "kernelcache-cache");
    const std::string mode(core::ConsumeModeName(c.mode));
    ASSERT_NE(vol, nullptr) << mode;
    EXPECT_EQ((*vol)["persistentVolumeClaim"].value("readOnly", false), c.read_only) << mode;
    for (const Json* container : {&spec["initContainers"][0], &spec["containers"][0]}) {
      const Json* m = FindMount(*container, "/var/cache/kernelcache");
      ASSERT_NE(m, nullptr) << mode;
      EXPECT_EQ(m->value("readOnly", false), c.read_only) << mode << " " << (*container)["name"];
      const Json* run = FindMount(*container, "/var/run/kernelcache");
      ASSERT_NE(run, nullptr) << mode;
      EXPECT_FALSE(run->value("readOnly", false)) << mode;
    }
    EXPECT_EQ(r.pod["metadata"]["annotations"]["kernelcache.io/consume-mode"], mode);
  }
}

TEST(MutateTest, GateRunsInitwarmWaitWithTheKernelCacheSettings) {
  core::KernelCache kc = Kc("llama", {{"app", "llama"}}, core::ConsumeMode::kShared);
  kc.spec.consume.verify = core::Level::kChecksums;
  kc.spec.consume.wait_timeout_seconds = 600;
  kc.spec.consume.on_timeout = core::OnTimeout::kStartCold;
  auto r = Mutate(Pod(), "ml", {kc}, kSettings);
  const Json& gate = r.pod["spec"]["initContainers"][0];
  EXPECT_EQ(gate["image"], kSettings.initwarm_image);
  EXPECT_EQ(gate["command"], Json::array({"initwarm"}));
  // Exactly the flags `initwarm wait` defines (initwarm/cli/wait_flags.cc).
  EXPECT_EQ(
      gate["args"],
      Json::array({"wait", "--root=/var/cache/kernelcache", "--view=/var/run/kernelcache/view",
                   "--mode=Shared", "--verify=Checksums", "--timeout=600s",
                   "--on-timeout=StartCold", "--kernelcache=llama", "--namespace=$(KC_NAMESPACE)",
                   "--node=$(KC_NODE_NAME)", "--resolve-url=" + kSettings.resolve_url}));
  const Json* node = Find(gate["env"], "KC_NODE_NAME");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ((*node)["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName");
  const Json* ns = Find(gate["env"], "KC_NAMESPACE");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ((*ns)["valueFrom"]["fieldRef"]["fieldPath"], "metadata.namespace");
  EXPECT_EQ(gate["resources"]["requests"]["cpu"], "100m");
  EXPECT_EQ(gate["resources"]["limits"]["memory"], "1Gi");
  EXPECT_FALSE(gate["resources"]["limits"].contains("nvidia.com/gpu"));
  EXPECT_EQ(gate["securityContext"],
            core::ModelPodSecurity(core::KernelCacheSpec(), Pod()["spec"]).container);
}

TEST(MutateTest, NoResolveUrlNoFlag) {
  InjectSettings s = kSettings;
  s.resolve_url.clear();
  auto r = Mutate(Pod(), "ml", {Kc("llama", {{"app", "llama"}})}, s);
  for (const Json& a : r.pod["spec"]["initContainers"][0]["args"]) {
    EXPECT_EQ(a.get<std::string>().rfind("--resolve-url", 0), std::string::npos);
  }
}

// The gate goes first, before the user's own init containers.
TEST(MutateTest, GateIsTheFirstInitContainer) {
  Json in = Pod();
  in["spec"]["initContainers"] = {{{"name", "download-weights"}, {"image", "busybox"}}};
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  const Json& inits = r.pod["spec"]["initContainers"];
  ASSERT_EQ(inits.size(), 2u);
  EXPECT_EQ(inits[0]["name"], "kernelcache-wait");
  EXPECT_EQ(inits[1]["name"], "download-weights");
  // User init containers get neither env nor mounts.
  EXPECT_FALSE(inits[1].contains("env"));
  ExpectPatchGivesPod(in, r);
}

// kernelcache.io/watch-misses adds the miss watcher after every other init
// container, as a native sidecar sharing the gate's mounts; a bad value adds
// none and warns; mutating again changes nothing.
TEST(MutateTest, WatchMissesAnnotationAddsTheWatcherLast) {
  Json in = Pod();
  in["spec"]["initContainers"] = {{{"name", "download-weights"}, {"image", "busybox"}}};
  in["metadata"]["annotations"] = {{"kernelcache.io/watch-misses", "10s"}};
  auto r =
      Mutate(in, "ml", {Kc("llama", {{"app", "llama"}}, core::ConsumeMode::kShared)}, kSettings);
  const Json& inits = r.pod["spec"]["initContainers"];
  ASSERT_EQ(inits.size(), 3u);
  EXPECT_EQ(inits[0]["name"], "kernelcache-wait");
  EXPECT_EQ(inits[2]["name"], "kernelcache-misses");
  EXPECT_EQ(inits[2]["restartPolicy"], "Always");
  EXPECT_EQ(inits[2]["args"],
            Json::array({"misses", "--view", "/var/run/kernelcache/view", "--interval", "10s",
                         "--report-url", kSettings.resolve_url, "--token-file",
                         "/var/run/secrets/kernelcache.io/token"}));
  EXPECT_EQ(inits[2]["image"], inits[0]["image"]);
  // The gate's mounts (read-only) and the token, which no other container
  // mounts.
  Json mounts = inits[0]["volumeMounts"];
  for (Json& m : mounts) m["readOnly"] = true;
  mounts.push_back({{"name", "kernelcache-token"},
                    {"mountPath", "/var/run/secrets/kernelcache.io"},
                    {"readOnly", true}});
  EXPECT_EQ(inits[2]["volumeMounts"], mounts);
  EXPECT_NE(Find(r.pod["spec"]["volumes"], "kernelcache-token"), nullptr);
  for (const Json& c : r.pod["spec"]["containers"]) {
    EXPECT_EQ(FindMount(c, "/var/run/secrets/kernelcache.io"), nullptr) << c["name"];
  }
  EXPECT_EQ(FindMount(inits[0], "/var/run/secrets/kernelcache.io"), nullptr);
  // Its own uid, not the app's (the gate's).
  EXPECT_EQ(inits[2]["securityContext"]["runAsUser"], 65533);
  EXPECT_NE(inits[2]["securityContext"]["runAsUser"], inits[0]["securityContext"]["runAsUser"]);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.conflicts.empty());
  ExpectPatchGivesPod(in, r);
  auto again =
      Mutate(r.pod, "ml", {Kc("llama", {{"app", "llama"}}, core::ConsumeMode::kShared)}, kSettings);
  EXPECT_TRUE(again.patch.empty()) << again.patch.dump();

  // Without --resolve-url the watcher only logs: no report flags, no token.
  InjectSettings no_url = kSettings;
  no_url.resolve_url.clear();
  auto local =
      Mutate(in, "ml", {Kc("llama", {{"app", "llama"}}, core::ConsumeMode::kShared)}, no_url);
  const Json* lw = Find(local.pod["spec"]["initContainers"], "kernelcache-misses");
  ASSERT_NE(lw, nullptr);
  EXPECT_EQ((*lw)["args"].size(), 5u);
  EXPECT_EQ(Find(local.pod["spec"]["volumes"], "kernelcache-token"), nullptr);

  in["metadata"]["annotations"]["kernelcache.io/watch-misses"] = "soon";
  auto bad = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_EQ(Find(bad.pod["spec"]["initContainers"], "kernelcache-misses"), nullptr);
  EXPECT_NE(Find(bad.pod["spec"]["initContainers"], "kernelcache-wait"), nullptr);
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_NE(bad.warnings[0].find("annotation kernelcache.io/watch-misses: \"soon\" is not"),
            std::string::npos)
      << bad.warnings[0];

  in["metadata"]["annotations"]["kernelcache.io/watch-misses"] = "false";
  auto off = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_EQ(Find(off.pod["spec"]["initContainers"], "kernelcache-misses"), nullptr);
  EXPECT_TRUE(off.warnings.empty());
}

// spec.harvest.mode Merge: the watcher also gets the inbox flags, its pod
// uid and a writable mount of the cache claim that only it has; the gate
// and the app containers keep the read-only cache.
TEST(MutateTest, HarvestMergeGivesOnlyTheWatcherAWritableInbox) {
  Json in = Pod();
  in["metadata"]["annotations"] = {{"kernelcache.io/watch-misses", "10s"}};
  core::KernelCache kc = Kc("llama", {{"app", "llama"}}, core::ConsumeMode::kShared);
  kc.spec.harvest.mode = core::HarvestMode::kMerge;
  kc.spec.harvest.max_files_per_pod = 64;
  kc.spec.harvest.max_bytes_per_pod = "1Mi";
  auto r = Mutate(in, "ml", {kc}, kSettings);
  const Json* w = Find(r.pod["spec"]["initContainers"], "kernelcache-misses");
  ASSERT_NE(w, nullptr);
  const Json& args = (*w)["args"];
  const std::vector<std::string> tail(args.end() - 6, args.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"--inbox", "/var/cache/kernelcache-inbox",
                                            "--harvest-max-files", "64", "--harvest-max-bytes",
                                            "1048576"}));
  EXPECT_EQ((*w)["env"][0]["valueFrom"]["fieldRef"]["fieldPath"], "metadata.uid");
  // One cache volume (two volumes of one claim never finish mounting),
  // writable at the claim; every mount of it read-only but the watcher's
  // inbox mount.
  const Json* vol = Find(r.pod["spec"]["volumes"], "kernelcache-cache");
  ASSERT_NE(vol, nullptr);
  EXPECT_EQ((*vol)["persistentVolumeClaim"]["claimName"], core::ClaimName(kc));
  EXPECT_FALSE((*vol)["persistentVolumeClaim"].contains("readOnly"));
  const Json* inbox = FindMount(*w, "/var/cache/kernelcache-inbox");
  ASSERT_NE(inbox, nullptr);
  EXPECT_EQ((*inbox)["name"], "kernelcache-cache");
  EXPECT_FALSE(inbox->contains("readOnly"));
  EXPECT_EQ((*inbox)["subPath"], "v1/.inbox");  // never the whole claim
  EXPECT_EQ((*FindMount(*w, "/var/cache/kernelcache"))["readOnly"], true);
  // The watcher's own uid, in the cache group; the gate keeps the app's.
  EXPECT_EQ((*w)["securityContext"]["runAsUser"], kSettings.miss_watcher_uid);
  EXPECT_EQ((*w)["securityContext"]["readOnlyRootFilesystem"], true);
  const Json& gate = r.pod["spec"]["initContainers"][0];
  EXPECT_EQ(FindMount(gate, "/var/cache/kernelcache-inbox"), nullptr);
  EXPECT_EQ((*FindMount(gate, "/var/cache/kernelcache"))["readOnly"], true);
  for (const Json& c : r.pod["spec"]["containers"]) {
    EXPECT_EQ(FindMount(c, "/var/cache/kernelcache-inbox"), nullptr) << c["name"];
    EXPECT_EQ((*FindMount(c, "/var/cache/kernelcache"))["readOnly"], true) << c["name"];
  }
  EXPECT_TRUE(r.conflicts.empty());
  ExpectPatchGivesPod(in, r);
  auto again = Mutate(r.pod, "ml", {kc}, kSettings);
  EXPECT_TRUE(again.patch.empty()) << again.patch.dump();
  // Report (the default): no inbox, the claim read-only.
  auto report =
      Mutate(in, "ml", {Kc("llama", {{"app", "llama"}}, core::ConsumeMode::kShared)}, kSettings);
  const Json* ro = Find(report.pod["spec"]["volumes"], "kernelcache-cache");
  ASSERT_NE(ro, nullptr);
  EXPECT_EQ((*ro)["persistentVolumeClaim"]["readOnly"], true);
  EXPECT_EQ(FindMount(*Find(report.pod["spec"]["initContainers"], "kernelcache-misses"),
                      "/var/cache/kernelcache-inbox"),
            nullptr);
}

// A pod whose containers could reach the watcher (a shared process
// namespace, or the watcher's uid) gets a watcher that reports without
// harvesting, and is told why: a warning and an Event.
TEST(MutateTest, HarvestIsRefusedToAPodThatCouldReachTheWatcher) {
  core::KernelCache kc = Kc("llama", {{"app", "llama"}}, core::ConsumeMode::kShared);
  kc.spec.harvest.mode = core::HarvestMode::kMerge;
  Json shared = Pod();
  shared["metadata"]["annotations"] = {{"kernelcache.io/watch-misses", "10s"}};
  shared["spec"]["shareProcessNamespace"] = true;
  Json same_uid = Pod();
  same_uid["metadata"]["annotations"] = {{"kernelcache.io/watch-misses", "10s"}};
  same_uid["spec"]["containers"][0]["securityContext"] = {{"runAsUser", 65533}};
  for (const auto& [in, why] : std::vector<std::pair<Json, std::string>>{
           {shared, "spec.shareProcessNamespace"}, {same_uid, "uid 65533"}}) {
    auto r = Mutate(in, "ml", {kc}, kSettings);
    const Json* w = Find(r.pod["spec"]["initContainers"], "kernelcache-misses");
    ASSERT_NE(w, nullptr) << why;
    EXPECT_EQ(FindMount(*w, "/var/cache/kernelcache-inbox"), nullptr) << why;
    for (const Json& a : (*w)["args"]) EXPECT_NE(a, "--inbox") << why;
    EXPECT_NE(std::find((*w)["args"].begin(), (*w)["args"].end(), "--report-url"),
              (*w)["args"].end())
        << why;
    const Json* vol = Find(r.pod["spec"]["volumes"], "kernelcache-cache");
    ASSERT_NE(vol, nullptr);
    EXPECT_EQ((*vol)["persistentVolumeClaim"]["readOnly"], true) << why;
    ASSERT_EQ(r.warnings.size(), 1u) << why;
    EXPECT_NE(r.warnings[0].find("does not harvest"), std::string::npos) << r.warnings[0];
    EXPECT_NE(r.warnings[0].find(why), std::string::npos) << r.warnings[0];
    ASSERT_EQ(r.events.size(), 1u) << why;
    EXPECT_EQ(r.events[0].reason, "HarvestRefused");
    ExpectPatchGivesPod(in, r);
  }
}

// A separate miss channel URL goes to the watcher; the gate keeps the
// resolve URL.
TEST(MutateTest, TheWatcherReportsToTheMissesUrl) {
  Json in = Pod();
  in["metadata"]["annotations"] = {{"kernelcache.io/watch-misses", "10s"}};
  InjectSettings s = kSettings;
  s.misses_url = "http://kernelcache-operator.kc.svc:8081";
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, s);
  const Json* w = Find(r.pod["spec"]["initContainers"], "kernelcache-misses");
  ASSERT_NE(w, nullptr);
  const Json& args = (*w)["args"];
  auto at = std::find(args.begin(), args.end(), "--report-url");
  ASSERT_NE(at, args.end());
  EXPECT_EQ(*(at + 1), s.misses_url);
  const Json& gate = r.pod["spec"]["initContainers"][0];
  EXPECT_NE(std::find(gate["args"].begin(), gate["args"].end(), "--resolve-url=" + s.resolve_url),
            gate["args"].end());
}

TEST(MutateTest, APodThatDiffersFromTheWarmupIsGatedWithAParityWarningEventAndAnnotation) {
  Json in = Pod();
  in["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v0.12.0";
  in["spec"]["containers"][0]["env"] = {{{"name", "VLLM_USE_V1"}, {"value", "0"}}};
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_EQ(r.kernelcache, "llama");  // still gated: the cache may serve part of it
  const std::string want =
      "image: no container runs the warmed image vllm/vllm-openai:v0.11.0 (server runs "
      "vllm/vllm-openai:v0.12.0); env: VLLM_USE_V1 is \"0\" in container server, unset in the "
      "warmup";
  EXPECT_EQ(r.pod["metadata"]["annotations"]["kernelcache.io/parity-mismatch"], want);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("differs from what KernelCache llama warmed"), std::string::npos)
      << r.warnings[0];
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].reason, "ParityMismatch");
  EXPECT_EQ(r.events[0].kc_name, "llama");
  EXPECT_NE(r.events[0].message.find(want), std::string::npos) << r.events[0].message;
  ExpectPatchGivesPod(in, r);
  // Reinvocation changes nothing; a pod that matches carries no annotation.
  EXPECT_TRUE(Mutate(r.pod, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings).patch.empty());
  auto same = Mutate(Pod(), "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_FALSE(same.pod["metadata"]["annotations"].contains("kernelcache.io/parity-mismatch"));
  EXPECT_TRUE(same.events.empty());
}

TEST(MutateTest, EveryAppContainerGetsEnvAndMounts) {
  Json in = Pod();
  in["spec"]["containers"].push_back({{"name", "sidecar"}, {"image", "envoy"}});
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  for (const Json& c : r.pod["spec"]["containers"]) {
    EXPECT_NE(Find(c["env"], "TRITON_CACHE_DIR"), nullptr) << c["name"];
    EXPECT_NE(FindMount(c, "/var/run/kernelcache"), nullptr) << c["name"];
    EXPECT_NE(FindMount(c, "/var/cache/kernelcache"), nullptr) << c["name"];
  }
}

// verify LoadTest: the gate requests the nvidia.com/gpu of the largest app
// container (limits, else requests), as written.
TEST(MutateTest, LoadTestGateRequestsTheLargestGpuCount) {
  struct Case {
    std::string name;
    std::vector<Json> resources;
    Json want;  // null: no GPU on the gate
  } cases[] = {
      {"one", {{{"limits", {{"nvidia.com/gpu", "1"}}}}}, "1"},
      {"largest of three",
       {{{"limits", {{"nvidia.com/gpu", "2"}}}},
        {{"limits", {{"nvidia.com/gpu", 4}}}},
        {{"requests", {{"nvidia.com/gpu", "1"}}}}},
       4},
      {"requests only", {{{"requests", {{"nvidia.com/gpu", "8"}}}}}, "8"},
      {"none", {{{"limits", {{"cpu", "4"}}}}}, nullptr},
      {"garbage", {{{"limits", {{"nvidia.com/gpu", "many"}}}}, {{"limits", "x"}}}, nullptr},
  };
  for (const auto& c : cases) {
    Json in = Pod();
    in["spec"]["containers"] = Json::array();
    for (size_t i = 0; i < c.resources.size(); ++i) {
      in["spec"]["containers"].push_back(
          {{"name", "c" + std::to_string(i)}, {"image", "x"}, {"resources", c.resources[i]}});
    }
    core::KernelCache kc = Kc("llama", {{"app", "llama"}});
    kc.spec.consume.verify = core::Level::kLoadTest;
    auto r = Mutate(in, "ml", {kc}, kSettings);
    const Json& res = r.pod["spec"]["initContainers"][0]["resources"];
    if (c.want.is_null()) {
      EXPECT_FALSE(res["limits"].contains("nvidia.com/gpu")) << c.name;
    } else {
      EXPECT_EQ(res["limits"]["nvidia.com/gpu"], c.want) << c.name;
      EXPECT_EQ(res["requests"]["nvidia.com/gpu"], c.want) << c.name;
    }
    // Without LoadTest the gate asks for no GPU.
    kc.spec.consume.verify = core::Level::kChecksums;
    auto plain = Mutate(in, "ml", {kc}, kSettings);
    EXPECT_FALSE(
        plain.pod["spec"]["initContainers"][0]["resources"]["limits"].contains("nvidia.com/gpu"))
        << c.name;
  }
}

// Pods left alone, and why.
TEST(MutateTest, PodsThatAreNotMutated) {
  core::KernelCache deleting = Kc("llama", {{"app", "llama"}});
  deleting.metadata.deletion_timestamp = std::chrono::system_clock::now();
  core::KernelCache other_ns = Kc("llama", {{"app", "llama"}});
  other_ns.metadata.namespace_ = "elsewhere";
  core::KernelCache empty_selector = Kc("all", {});
  Json opt_out_label = Pod({{"app", "llama"}, {"kernelcache.io/inject", "false"}});
  Json opt_out_annotation = Pod();
  opt_out_annotation["metadata"]["annotations"] = {{"kernelcache.io/inject", "false"}};
  Json no_containers = Pod();
  no_containers["spec"]["containers"] = Json::array();
  Json bad_env = Pod();
  bad_env["spec"]["containers"][0]["env"] = "TRITON_CACHE_DIR=/x";
  Json bad_volumes = Pod();
  bad_volumes["spec"]["volumes"] = {{"name", "x"}};
  // A spec as the API could hold it if the CRD's enums were bypassed: decoded
  // with an error, never gated on its defaults.
  const auto decoded_with = [](const std::string& field, const std::string& value) {
    Json j = core::KernelCacheToJson(Kc("llama", {{"app", "llama"}}));
    j["spec"]["consume"][field] = value;
    return core::KernelCacheFromJson(j);
  };
  core::KernelCache bad_mode = decoded_with("mode", "Borrow");
  core::KernelCache bad_verify = decoded_with("verify", "Vibes");
  struct Case {
    std::string name;
    Json pod;
    std::string ns;
    std::vector<core::KernelCache> kcs;
    std::string reason;  // substring of `skipped`
    size_t events;
  } cases[] = {
      {"no KernelCache", Pod(), "ml", {}, "no KernelCache", 0},
      {"selector does not match",
       Pod({{"app", "mistral"}}),
       "ml",
       {Kc("llama", {{"app", "llama"}})},
       "no KernelCache",
       0},
      {"label opt-out", opt_out_label, "ml", {Kc("llama", {{"app", "llama"}})}, "inject", 0},
      {"annotation opt-out",
       opt_out_annotation,
       "ml",
       {Kc("llama", {{"app", "llama"}})},
       "inject",
       0},
      {"operator namespace",
       Pod(),
       "kernelcache-system",
       {Kc("llama", {{"app", "llama"}})},
       "operator's",
       0},
      {"KernelCache being deleted", Pod(), "ml", {deleting}, "no KernelCache", 0},
      {"KernelCache of another namespace", Pod(), "ml", {other_ns}, "no KernelCache", 0},
      {"empty selector matches nothing", Pod(), "ml", {empty_selector}, "no KernelCache", 0},
      {"not an object", Json::array(), "ml", {Kc("llama", {{"app", "llama"}})}, "not a JSON", 0},
      {"no containers",
       no_containers,
       "ml",
       {Kc("llama", {{"app", "llama"}})},
       "spec.containers",
       0},
      {"env not a list", bad_env, "ml", {Kc("llama", {{"app", "llama"}})}, "env", 0},
      {"volumes not a list",
       bad_volumes,
       "ml",
       {Kc("llama", {{"app", "llama"}})},
       "spec.volumes",
       0},
      {"unknown mode", Pod(), "ml", {bad_mode}, "spec.consume.mode", 1},
      {"unknown verify", Pod(), "ml", {bad_verify}, "spec.consume.verify", 1},
  };
  for (const auto& c : cases) {
    auto r = Mutate(c.pod, c.ns, c.kcs, kSettings);
    EXPECT_EQ(r.pod, c.pod) << c.name;
    EXPECT_TRUE(r.patch.empty()) << c.name;
    EXPECT_TRUE(r.kernelcache.empty()) << c.name;
    EXPECT_NE(r.skipped.find(c.reason), std::string::npos) << c.name << ": " << r.skipped;
    EXPECT_EQ(r.events.size(), c.events) << c.name;
  }
}

TEST(MutateTest, OptOutOnlyForTheValueFalse) {
  auto r = Mutate(Pod({{"app", "llama"}, {"kernelcache.io/inject", "true"}}), "ml",
                  {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_EQ(r.kernelcache, "llama");
}

TEST(MutateTest, TwoMatchingKernelCachesAdmitUnchangedWithAnEventNamingBoth) {
  const Json in = Pod({{"app", "llama"}, {"tier", "gpu"}});
  auto r = Mutate(in, "ml", {Kc("b-tier", {{"tier", "gpu"}}), Kc("a-llama", {{"app", "llama"}})},
                  kSettings);
  EXPECT_EQ(r.pod, in);
  EXPECT_TRUE(r.patch.empty());
  ASSERT_EQ(r.events.size(), 2u);
  std::set<std::string> on;
  for (const auto& e : r.events) {
    on.insert(e.kc_name);
    EXPECT_EQ(e.kc_namespace, "ml");
    EXPECT_EQ(e.reason, "AmbiguousPodSelector");
    EXPECT_NE(e.message.find("a-llama, b-tier"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("pod llama-0"), std::string::npos) << e.message;
  }
  EXPECT_EQ(on, (std::set<std::string>{"a-llama", "b-tier"}));
  ASSERT_EQ(r.warnings.size(), 1u);
}

// The user's own env, volume, mount and init container win; each conflict
// is in the annotation and in a Warning Event on the KernelCache.
TEST(MutateTest, ConflictsKeepTheUsersAndAreRecorded) {
  struct Case {
    std::string name;
    std::function<void(Json&)> edit;
    std::string conflict;                   // substring of the one conflict
    std::function<void(const Json&)> kept;  // checks the user's item survived
  } cases[] = {
      {"env",
       [](Json& p) {
         p["spec"]["containers"][0]["env"] = {{{"name", "TRITON_CACHE_DIR"}, {"value", "/mine"}}};
       },
       "container server: env TRITON_CACHE_DIR",
       [](const Json& p) {
         const Json& env = p["spec"]["containers"][0]["env"];
         int n = 0;
         for (const Json& e : env) n += e["name"] == "TRITON_CACHE_DIR";
         EXPECT_EQ(n, 1);
         EXPECT_EQ((*Find(env, "TRITON_CACHE_DIR"))["value"], "/mine");
       }},
      {"env from a secret",
       [](Json& p) {
         p["spec"]["containers"][0]["env"] = {
             {{"name", "VLLM_CACHE_ROOT"},
              {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}}};
       },
       "env VLLM_CACHE_ROOT",
       [](const Json& p) {
         const Json* e = Find(p["spec"]["containers"][0]["env"], "VLLM_CACHE_ROOT");
         ASSERT_NE(e, nullptr);
         EXPECT_FALSE(e->contains("value"));
       }},
      {"volume",
       [](Json& p) {
         p["spec"]["volumes"] = {{{"name", "kernelcache-run"}, {"hostPath", {{"path", "/tmp"}}}}};
       },
       "volume kernelcache-run",
       [](const Json& p) {
         EXPECT_TRUE((*Find(p["spec"]["volumes"], "kernelcache-run")).contains("hostPath"));
       }},
      {"mount",
       [](Json& p) {
         p["spec"]["volumes"] = {{{"name", "mine"}, {"emptyDir", Json::object()}}};
         p["spec"]["containers"][0]["volumeMounts"] = {
             {{"name", "mine"}, {"mountPath", "/var/run/kernelcache"}}};
       },
       "container server: mount at /var/run/kernelcache",
       [](const Json& p) {
         const Json* m = FindMount(p["spec"]["containers"][0], "/var/run/kernelcache");
         ASSERT_NE(m, nullptr);
         EXPECT_EQ((*m)["name"], "mine");
       }},
      {"init container",
       [](Json& p) {
         p["spec"]["initContainers"] = {{{"name", "kernelcache-wait"}, {"image", "mine"}}};
       },
       "init container kernelcache-wait",
       [](const Json& p) {
         ASSERT_EQ(p["spec"]["initContainers"].size(), 1u);
         EXPECT_EQ(p["spec"]["initContainers"][0]["image"], "mine");
       }},
  };
  for (const auto& c : cases) {
    Json in = Pod();
    c.edit(in);
    auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
    ASSERT_EQ(r.conflicts.size(), 1u) << c.name;
    EXPECT_NE(r.conflicts[0].find(c.conflict), std::string::npos)
        << c.name << ": " << r.conflicts[0];
    c.kept(r.pod);
    EXPECT_EQ(r.pod["metadata"]["annotations"]["kernelcache.io/injection-conflicts"],
              r.conflicts[0])
        << c.name;
    ASSERT_EQ(r.events.size(), 1u) << c.name;
    EXPECT_EQ(r.events[0].kc_name, "llama");
    EXPECT_EQ(r.events[0].reason, "InjectionConflict");
    EXPECT_NE(r.events[0].message.find(c.conflict), std::string::npos) << r.events[0].message;
    EXPECT_EQ(r.kernelcache, "llama") << c.name;  // the rest is still injected
    ExpectPatchGivesPod(in, r);
    // And a second pass changes nothing, conflicts included.
    auto again = Mutate(r.pod, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
    EXPECT_TRUE(again.patch.empty()) << c.name << ": " << again.patch.dump();
  }
}

// Equal items are ours (or identical): no conflict, nothing added twice.
TEST(MutateTest, AnItemEqualToOursIsNoConflict) {
  Json in = Pod();
  in["spec"]["containers"][0]["env"] = {
      {{"name", "TRITON_CACHE_DIR"}, {"value", "/var/run/kernelcache/view/triton"}}};
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_TRUE(r.conflicts.empty());
  int n = 0;
  for (const Json& e : r.pod["spec"]["containers"][0]["env"]) n += e["name"] == "TRITON_CACHE_DIR";
  EXPECT_EQ(n, 1);
}

TEST(MutateTest, MutatingAMutatedPodChangesNothing) {
  for (const core::ConsumeMode mode : {core::ConsumeMode::kCopy, core::ConsumeMode::kShared,
                                       core::ConsumeMode::kSharedReadWrite}) {
    core::KernelCache kc = Kc("llama", {{"app", "llama"}}, mode);
    kc.spec.consume.verify = core::Level::kLoadTest;
    auto once = Mutate(Pod(), "ml", {kc}, kSettings);
    ASSERT_FALSE(once.patch.empty());
    auto twice = Mutate(once.pod, "ml", {kc}, kSettings);
    EXPECT_TRUE(twice.patch.empty()) << core::ConsumeModeName(mode) << ": " << twice.patch.dump();
    EXPECT_EQ(twice.pod, once.pod);
    EXPECT_TRUE(twice.conflicts.empty());
    EXPECT_TRUE(twice.events.empty());
  }
}

// On reinvocation the API server has added defaults to what we injected
// (terminationMessagePath, fieldRef apiVersion, resources it normalised):
// extra fields in our own items are not conflicts.
TEST(MutateTest, ReinvocationAfterApiServerDefaultsChangesNothing) {
  auto once = Mutate(Pod(), "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  Json defaulted = once.pod;
  Json& gate = defaulted["spec"]["initContainers"][0];
  gate["terminationMessagePath"] = "/dev/termination-log";
  gate["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] = "v1";
  gate["volumeMounts"][1]["mountPropagation"] = "None";
  gate["securityContext"]["privileged"] = false;
  // The ServiceAccount admission plugin, run again after our mutation, mounts
  // the token into every container, our gate included (seen on the real
  // node: every gated pod got a false InjectionConflict Event).
  const Json token = {{"name", "kube-api-access-x7k2p"},
                      {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                      {"readOnly", true}};
  gate["volumeMounts"].push_back(token);
  defaulted["spec"]["containers"][0]["volumeMounts"].insert(
      defaulted["spec"]["containers"][0]["volumeMounts"].begin(), token);
  defaulted["spec"]["containers"][0]["terminationMessagePolicy"] = "File";
  defaulted["spec"]["containers"][0]["volumeMounts"][0]["mountPropagation"] = "None";
  auto again = Mutate(defaulted, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_TRUE(again.patch.empty()) << again.patch.dump();
  EXPECT_TRUE(again.conflicts.empty());
  EXPECT_TRUE(again.events.empty());
}

// What still is the user's: a gate whose mounts lack one of ours, or whose
// args differ (scalar lists must match exactly, extra args included).
TEST(MutateTest, AGateMissingOurMountOrWithOtherArgsIsAConflict) {
  auto once = Mutate(Pod(), "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  for (int variant = 0; variant < 3; ++variant) {
    Json pod = once.pod;
    Json& gate = pod["spec"]["initContainers"][0];
    if (variant == 0) gate["volumeMounts"].erase(0);
    if (variant == 1) gate["args"].push_back("--verbose");
    if (variant == 2) gate["volumeMounts"][0]["mountPath"] = "/elsewhere";
    auto again = Mutate(pod, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
    ASSERT_EQ(again.conflicts.size(), 1u) << variant;
    EXPECT_NE(again.conflicts[0].find("init container kernelcache-wait differs"), std::string::npos)
        << again.conflicts[0];
  }
}

// A Deployment's pods have no name yet (generateName): still mutated, and
// messages name the prefix.
TEST(MutateTest, PodWithGenerateNameOnly) {
  Json in = Pod({{"app", "llama"}, {"tier", "gpu"}});
  in["metadata"].erase("name");
  in["metadata"]["generateName"] = "llama-7d9f8c-";
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  EXPECT_EQ(r.kernelcache, "llama");
  EXPECT_EQ(PodDisplayName(in), "pod llama-7d9f8c- (generateName)");
  auto amb = Mutate(in, "ml", {Kc("a", {{"app", "llama"}}), Kc("b", {{"tier", "gpu"}})}, kSettings);
  ASSERT_FALSE(amb.events.empty());
  EXPECT_NE(amb.events[0].message.find("llama-7d9f8c- (generateName)"), std::string::npos);
  Json bare = in;
  bare["metadata"].erase("generateName");
  EXPECT_EQ(PodDisplayName(bare), "pod (unnamed)");
}

// A pod without metadata.annotations, volumes or env gets them created.
TEST(MutateTest, AbsentListsAndMapsAreCreated) {
  Json in = {{"metadata", {{"labels", {{"app", "llama"}}}}},
             {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  ExpectPatchGivesPod(in, r);
  EXPECT_TRUE(r.pod["metadata"]["annotations"].is_object());
  EXPECT_EQ(r.pod["spec"]["volumes"].size(), 2u);
  EXPECT_EQ(r.pod["spec"]["containers"][0]["env"].size(), core::CacheViewEnv().size());
}

TEST(MutateTest, ExistingClaimIsMounted) {
  core::KernelCache kc = Kc("llama", {{"app", "llama"}});
  kc.spec.storage = {"", "", "team-cache"};
  auto r = Mutate(Pod(), "ml", {kc}, kSettings);
  EXPECT_EQ(
      (*Find(r.pod["spec"]["volumes"], "kernelcache-cache"))["persistentVolumeClaim"]["claimName"],
      "team-cache");
}

// The gate runs under the core rule (core::ModelPodSecurity, table-tested
// in core/security_context_test.cc): the app's uid/gid, locked down; the
// pod gains the cache group as a supplemental group, its own groups kept.
TEST(MutateTest, GateFollowsTheAppAndThePodJoinsTheCacheGroup) {
  struct Case {
    std::string name;
    Json pod_sc, app_sc;
    int64_t want_user, want_group;
    Json want_groups;
  } cases[] = {
      {"nothing set", nullptr, nullptr, 65532, 65532, {65532}},
      {"pod level", {{"runAsUser", 1000}, {"runAsGroup", 2000}}, nullptr, 1000, 2000, {65532}},
      {"container wins", {{"runAsUser", 1000}}, {{"runAsUser", 1001}}, 1001, 65532, {65532}},
      {"own groups kept", {{"supplementalGroups", {7}}}, nullptr, 65532, 65532, {7, 65532}},
      {"fsGroup already the cache group", {{"fsGroup", 65532}}, nullptr, 65532, 65532, nullptr},
  };
  for (const auto& c : cases) {
    Json pod = Pod();
    if (!c.pod_sc.is_null()) pod["spec"]["securityContext"] = c.pod_sc;
    if (!c.app_sc.is_null()) pod["spec"]["containers"][0]["securityContext"] = c.app_sc;
    auto r = Mutate(pod, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
    ASSERT_EQ(r.kernelcache, "llama") << c.name << r.skipped;
    const Json& sc = r.pod["spec"]["initContainers"][0]["securityContext"];
    EXPECT_EQ(sc["runAsUser"], c.want_user) << c.name;
    EXPECT_EQ(sc["runAsGroup"], c.want_group) << c.name;
    EXPECT_EQ(sc["runAsNonRoot"], true) << c.name;
    EXPECT_EQ(sc["allowPrivilegeEscalation"], false) << c.name;
    EXPECT_EQ(sc["capabilities"]["drop"], Json::array({"ALL"})) << c.name;
    EXPECT_EQ(sc["readOnlyRootFilesystem"], true) << c.name;
    EXPECT_EQ(sc["seccompProfile"]["type"], "RuntimeDefault") << c.name;
    const Json& psc = r.pod["spec"]["securityContext"];
    EXPECT_EQ(psc.contains("supplementalGroups") ? psc["supplementalGroups"] : Json(),
              c.want_groups)
        << c.name;
    // Mutating the mutated pod changes nothing.
    auto again = Mutate(r.pod, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
    EXPECT_EQ(again.pod, r.pod) << c.name;
  }
}

// The operator's gate reports select pods by kernelcache.io/consumer.
TEST(MutateTest, GatedPodGetsTheConsumerLabelAsOnePatchOp) {
  const Json in = Pod();
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  ASSERT_EQ(r.kernelcache, "llama") << r.skipped;
  ExpectPatchGivesPod(in, r);
  EXPECT_EQ(r.pod["metadata"]["labels"][core::kConsumerLabel], "llama");
  EXPECT_EQ(r.pod["metadata"]["labels"]["app"], "llama");
  int label_ops = 0;
  for (const Json& op : r.patch) {
    const std::string path = op["path"].get<std::string>();
    if (path.rfind("/metadata/labels", 0) != 0) continue;
    ++label_ops;
    EXPECT_EQ(op["op"], "add");
    EXPECT_EQ(path, "/metadata/labels/kernelcache.io~1consumer");  // RFC 6901: "/" is "~1"
    EXPECT_EQ(op["value"], "llama");
  }
  EXPECT_EQ(label_ops, 1) << r.patch.dump();
  // Re-admission: the label is there, nothing changes.
  EXPECT_TRUE(Mutate(r.pod, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings).patch.empty());
}

TEST(MutateTest, PodWithoutALabelsMapGetsOne) {
  core::KernelCache kc = Kc("all", {});
  kc.spec.pod_selector.match_expressions = {{"tier", "DoesNotExist", {}}};
  for (const bool null_labels : {false, true}) {
    Json in = Pod();
    in["metadata"].erase("labels");
    if (null_labels) in["metadata"]["labels"] = nullptr;
    auto r = Mutate(in, "ml", {kc}, kSettings);
    ASSERT_EQ(r.kernelcache, "all") << r.skipped;
    ExpectPatchGivesPod(in, r);
    EXPECT_EQ(r.pod["metadata"]["labels"], Json({{core::kConsumerLabel, "all"}}));
    EXPECT_TRUE(Mutate(r.pod, "ml", {kc}, kSettings).patch.empty());
  }
  Json no_metadata = Pod();
  no_metadata.erase("metadata");
  auto r = Mutate(no_metadata, "ml", {kc}, kSettings);
  ASSERT_EQ(r.kernelcache, "all") << r.skipped;
  ExpectPatchGivesPod(no_metadata, r);
  EXPECT_EQ(r.pod["metadata"]["labels"][core::kConsumerLabel], "all");
}

// Like every other item the pod already has: a different value is kept and
// recorded as a conflict.
TEST(MutateTest, ADifferentConsumerLabelIsKeptAsAConflict) {
  const Json in = Pod({{"app", "llama"}, {core::kConsumerLabel, "other"}});
  auto r = Mutate(in, "ml", {Kc("llama", {{"app", "llama"}})}, kSettings);
  ASSERT_EQ(r.kernelcache, "llama") << r.skipped;
  ExpectPatchGivesPod(in, r);
  EXPECT_EQ(r.pod["metadata"]["labels"][core::kConsumerLabel], "other");
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_NE(r.conflicts[0].find("kernelcache.io/consumer"), std::string::npos);
  EXPECT_NE(r.pod["metadata"]["annotations"][kAnnotationConflicts].get<std::string>().find(
                "kernelcache.io/consumer"),
            std::string::npos);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].reason, kReasonConflict);
}

TEST(MutateTest, LabelsThatAreNotAMapAreLeftAlone) {
  core::KernelCache kc = Kc("all", {});
  kc.spec.pod_selector.match_expressions = {{"tier", "DoesNotExist", {}}};
  Json in = Pod();
  in["metadata"]["labels"] = "app=llama";
  auto r = Mutate(in, "ml", {kc}, kSettings);
  EXPECT_TRUE(r.kernelcache.empty());
  EXPECT_TRUE(r.patch.empty());
  EXPECT_NE(r.skipped.find("metadata.labels"), std::string::npos) << r.skipped;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Golden: a realistic vLLM Deployment pod in, the mutated pod out
// (operator/webhook/testdata/; shown in docs/webhook.md). Set
// KC_UPDATE_GOLDEN=1 to rewrite the expected file after a reviewed change.
TEST(MutateTest, GoldenVllmDeploymentPod) {
  const std::string dir = std::string(KC_SOURCE_DIR) + "/operator/webhook/testdata/";
  const Json in = Json::parse(ReadFile(dir + "vllm-pod.json"), nullptr, false);
  ASSERT_FALSE(in.is_discarded()) << "vllm-pod.json";
  core::KernelCache kc = Kc("llama-70b", {{"app.kubernetes.io/name", "llama-70b"}});
  kc.metadata.namespace_ = "inference";
  kc.spec.consume.verify = core::Level::kLoadTest;
  kc.spec.consume.wait_timeout_seconds = 1200;
  kc.spec.consume.on_timeout = core::OnTimeout::kStartCold;
  // Warmed as the pod runs (no parity mismatch).
  kc.spec.image = in["spec"]["containers"][0]["image"];
  kc.spec.warmup.env = {{{"name", "VLLM_LOGGING_LEVEL"}, {"value", "INFO"}}};
  auto r = Mutate(in, "inference", {kc}, kSettings);
  ASSERT_EQ(r.kernelcache, "llama-70b") << r.skipped;
  ExpectPatchGivesPod(in, r);
  const std::string golden = dir + "vllm-pod.mutated.json";
  if (std::getenv("KC_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden) << r.pod.dump(2) << "\n";
  }
  const Json want = Json::parse(ReadFile(golden), nullptr, false);
  ASSERT_FALSE(want.is_discarded()) << golden;
  EXPECT_EQ(r.pod, want) << "diff: " << Diff(want, r.pod).dump(2);
  // The user's HF_HOME and their own TORCH_EXTENSIONS_DIR stay; the latter
  // is the one conflict.
  ASSERT_EQ(r.conflicts.size(), 1u);
  EXPECT_NE(r.conflicts[0].find("TORCH_EXTENSIONS_DIR"), std::string::npos);
  EXPECT_TRUE(Mutate(r.pod, "inference", {kc}, kSettings).patch.empty());
  // The pod had annotations: ours are added one by one, "/" escaped.
  std::set<std::string> paths;
  for (const Json& op : r.patch) paths.insert(op["path"].get<std::string>());
  EXPECT_TRUE(paths.count("/metadata/annotations/kernelcache.io~1injected")) << r.patch.dump();
  EXPECT_TRUE(paths.count("/metadata/annotations/kernelcache.io~1injection-conflicts"));
  EXPECT_TRUE(paths.count("/spec/initContainers")) << r.patch.dump();  // none before
}

}  // namespace
}  // namespace kc::webhook
