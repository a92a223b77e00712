#include "operator/decide/pod_parts.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace kc::op {
namespace {

using Json = nlohmann::json;

// A warmup pod spec as the Job's template holds it.
Json Template() {
  return {
      {"initContainers",
       Json::array(
           {{{"name", "prepare"},
             {"image", "initwarm:1"},
             {"args", {"prepare", "--root", "/var/cache/kernelcache"}},
             {"volumeMounts", {{{"name", "cache"}, {"mountPath", "/var/cache/kernelcache"}}}}},
            {{"name", "warmup"},
             {"image", "model:1"},
             {"command", {"python", "warm.py"}},
             {"env", {{{"name", "A"}, {"value", "1"}}}},
             {"volumeMounts", {{{"name", "run"}, {"mountPath", "/var/run/kernelcache"}}}}}})},
      {"containers", Json::array({{{"name", "seal"},
                                   {"image", "initwarm:1"},
                                   {"args", {"seal"}},
                                   {"volumeMounts",
                                    {{{"name", "cache"}, {"mountPath", "/var/cache/kernelcache"}},
                                     {{"name", "run"}, {"mountPath", "/var/run/kernelcache"}}}}}})},
      {"volumes",
       Json::array({{{"name", "cache"}, {"persistentVolumeClaim", {{"claimName", "kc-llama"}}}},
                    {{"name", "run"}, {"emptyDir", Json::object()}}})}};
}

TEST(PodParts, APodOfTheTemplateMatchesWhatAdmissionAddsAside) {
  const PodParts t = PodPartsOf(Template());
  EXPECT_EQ(t.size(), 5u);  // three containers, two volumes
  EXPECT_EQ(TemplateMismatch(PodPartsOf(Template()), t), "");
  // The ServiceAccount admission's token volume and mounts, and a sidecar
  // with volumes of its own, are not the template's business.
  Json pod = Template();
  for (Json& c : pod["containers"]) {
    c["volumeMounts"].push_back({{"name", "kube-api-access-x"},
                                 {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}});
  }
  pod["volumes"].push_back({{"name", "kube-api-access-x"}, {"projected", Json::object()}});
  pod["containers"].push_back(
      {{"name", "istio-proxy"},
       {"image", "proxy:1"},
       {"volumeMounts", {{{"name", "istio-envoy"}, {"mountPath", "/etc/istio"}}}}});
  pod["volumes"].push_back({{"name", "istio-envoy"}, {"emptyDir", Json::object()}});
  EXPECT_EQ(TemplateMismatch(PodPartsOf(pod), t), "");
}

TEST(PodParts, AStrangersPodIsNamedByWhatDiffers) {
  const PodParts t = PodPartsOf(Template());
  struct Case {
    const char* name;
    std::function<void(Json&)> edit;
    std::string want;
  } cases[] = {
      {"another seal image", [](Json& p) { p["containers"][0]["image"] = "evil:1"; },
       "container seal differs"},
      {"a seal that only writes its message",
       [](Json& p) {
         p["containers"][0]["command"] = {"sh", "-c", "echo {} > /dev/termination-log"};
       },
       "container seal differs"},
      {"no prepare", [](Json& p) { p["initContainers"].erase(0); }, "container prepare of the"},
      {"another claim",
       [](Json& p) { p["volumes"][0]["persistentVolumeClaim"]["claimName"] = "mine"; },
       "volume cache differs"},
      {"the cache an emptyDir",
       [](Json& p) {
         p["volumes"][0] = {{"name", "cache"}, {"emptyDir", Json::object()}};
       },
       "volume cache differs"},
      {"a sidecar mounting the cache",
       [](Json& p) {
         p["containers"].push_back({{"name", "x"},
                                    {"image", "x"},
                                    {"volumeMounts", {{{"name", "cache"}, {"mountPath", "/c"}}}}});
       },
       "volume cache differs"},
      {"another env", [](Json& p) { p["initContainers"][1]["env"][0]["value"] = "2"; },
       "container warmup differs"},
  };
  for (const Case& c : cases) {
    Json pod = Template();
    c.edit(pod);
    const std::string got = TemplateMismatch(PodPartsOf(pod), t);
    EXPECT_NE(got.find(c.want), std::string::npos) << c.name << ": " << got;
  }
  // An unknown template never matches a pod that runs something.
  EXPECT_NE(TemplateMismatch(PodPartsOf(Template()), {}), "");
  EXPECT_EQ(TemplateMismatch({}, {}), "");
}

TEST(PodParts, HostileShapesGiveNoPartsAndNoCrash) {
  for (const Json& spec : {Json(), Json::array(), Json("x"), Json{{"containers", 3}},
                           Json{{"containers", {1, Json::object(), {{"name", 5}}}}},
                           Json{{"volumes", {{{"name", "v"}}}}}}) {
    EXPECT_TRUE(PodPartsOf(spec).empty()) << spec.dump();
  }
}

TEST(PodParts, KeptPartsAreReadBackElseComputed) {
  const PodParts t = PodPartsOf(Template());
  Json kept = Json::object();
  for (const auto& [k, v] : t) kept[k] = v;
  EXPECT_EQ(KeptPodParts({{kPodPartsKey, kept}}, Json()), t);
  EXPECT_EQ(KeptPodParts(Json::object(), Template()), t);
}

}  // namespace
}  // namespace kc::op
