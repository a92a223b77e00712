#include "operator/webhook/review.h"

#include <gtest/gtest.h>

#include "base/base64.h"
#include "operator/webhook/json_patch.h"
#include "testing/objects.h"

namespace kc::webhook {
namespace {

using Json = nlohmann::json;

const InjectSettings kSettings = {"registry.example/initwarm:0.4.0", "http://op:8080",
                                  "kernelcache-system", "0.4.0"};

core::KernelCache Kc(const std::string& name, const std::string& app) {
  core::KernelCache kc = testutil::KernelCacheNamed(name);
  kc.spec.pod_selector.match_labels = {{"app", app}};
  return kc;
}

KernelCacheLister Lister(std::vector<core::KernelCache> kcs,
                         std::vector<std::string>* asked = nullptr) {
  return [kcs, asked](const std::string& ns) {
    if (asked != nullptr) asked->push_back(ns);
    std::vector<core::KernelCache> out;
    for (const auto& kc : kcs) {
      if (kc.metadata.namespace_ == ns) out.push_back(kc);
    }
    return out;
  };
}

Json PodReview(Json pod, const std::string& op = "CREATE", bool dry_run = false) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "uid-1"},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", "ml"},
            {"operation", op},
            {"object", std::move(pod)},
            {"dryRun", dry_run}}}};
}

Json Pod(const std::string& app) {
  return {{"metadata", {{"generateName", "x-"}, {"labels", {{"app", app}}}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}};
}

std::string Unbase64(const std::string& in) {
  auto out = DecodeBase64(in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::string();
}

TEST(ReviewTest, MatchingPodGetsAPatchThatGivesTheMutatedPod) {
  std::vector<std::string> asked;
  const Json pod = Pod("llama");
  ReviewAnswer a =
      ReviewPodMutation(PodReview(pod).dump(), Lister({Kc("llama", "llama")}, &asked), kSettings);
  ASSERT_EQ(a.http_status, 200) << a.body;
  EXPECT_EQ(asked, std::vector<std::string>{"ml"});
  const Json resp = Json::parse(a.body)["response"];
  EXPECT_EQ(resp["uid"], "uid-1");
  EXPECT_EQ(resp["allowed"], true);
  ASSERT_EQ(resp["patchType"], "JSONPatch");
  const Json patch = Json::parse(Unbase64(resp["patch"]));
  auto applied = ApplyPatch(pod, patch);
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ((*applied)["spec"]["initContainers"][0]["name"], "kernelcache-wait");
  EXPECT_EQ((*applied)["metadata"]["annotations"]["kernelcache.io/injected"], "llama");
  EXPECT_TRUE(a.events.empty());
}

TEST(ReviewTest, UnmatchedPodIsAllowedWithoutPatch) {
  ReviewAnswer a = ReviewPodMutation(PodReview(Pod("mistral")).dump(),
                                     Lister({Kc("llama", "llama")}), kSettings);
  ASSERT_EQ(a.http_status, 200);
  const Json resp = Json::parse(a.body)["response"];
  EXPECT_EQ(resp["allowed"], true);
  EXPECT_FALSE(resp.contains("patch"));
}

TEST(ReviewTest, EventsAreReturnedExceptOnDryRun) {
  const Json two = PodReview(Pod("llama"));
  auto lister = Lister({Kc("a", "llama"), Kc("b", "llama")});
  ReviewAnswer a = ReviewPodMutation(two.dump(), lister, kSettings);
  ASSERT_EQ(a.http_status, 200);
  EXPECT_EQ(a.events.size(), 2u);
  EXPECT_FALSE(Json::parse(a.body)["response"].contains("patch"));
  EXPECT_EQ(Json::parse(a.body)["response"]["warnings"].size(), 1u);
  ReviewAnswer dry =
      ReviewPodMutation(PodReview(Pod("llama"), "CREATE", true).dump(), lister, kSettings);
  EXPECT_TRUE(dry.events.empty());
}

TEST(ReviewTest, OnlyPodCreatesAreMutated) {
  Json update = PodReview(Pod("llama"), "UPDATE");
  Json other_kind = PodReview(Pod("llama"));
  other_kind["request"]["kind"]["kind"] = "Deployment";
  other_kind["request"]["kind"]["group"] = "apps";
  Json sub = PodReview(Pod("llama"));
  sub["request"]["subResource"] = "ephemeralcontainers";
  for (const Json& review : {update, other_kind, sub}) {
    ReviewAnswer a = ReviewPodMutation(review.dump(), Lister({Kc("llama", "llama")}), kSettings);
    ASSERT_EQ(a.http_status, 200);
    const Json resp = Json::parse(a.body)["response"];
    EXPECT_EQ(resp["allowed"], true);
    EXPECT_FALSE(resp.contains("patch")) << review.dump();
  }
}

TEST(ReviewTest, MalformedRequestsAre400WithAMessage) {
  Json no_uid = PodReview(Pod("llama"));
  no_uid["request"].erase("uid");
  Json v1beta1 = PodReview(Pod("llama"));
  v1beta1["apiVersion"] = "admission.k8s.io/v1beta1";
  for (const std::string& body :
       {std::string("not json"), std::string("{}"), no_uid.dump(), v1beta1.dump()}) {
    for (int handler = 0; handler < 2; ++handler) {
      ReviewAnswer a = handler == 0 ? ReviewPodMutation(body, Lister({}), kSettings)
                                    : ReviewKernelCacheValidation(body, Lister({}), nullptr);
      EXPECT_EQ(a.http_status, 400) << body;
      const Json err = Json::parse(a.body, nullptr, false);
      ASSERT_FALSE(err.is_discarded()) << a.body;
      EXPECT_TRUE(err["error"].is_string() && !err["error"].get<std::string>().empty()) << a.body;
    }
  }
}

TEST(ReviewTest, ListerThatThrowsIs500NotACrash) {
  KernelCacheLister bad = [](const std::string&) -> std::vector<core::KernelCache> {
    throw std::runtime_error("informer gone");
  };
  ReviewAnswer a = ReviewPodMutation(PodReview(Pod("llama")).dump(), bad, kSettings);
  EXPECT_EQ(a.http_status, 500);
  EXPECT_NE(a.body.find("informer gone"), std::string::npos);
  // No lister at all: no KernelCaches.
  ReviewAnswer none = ReviewPodMutation(PodReview(Pod("llama")).dump(), nullptr, kSettings);
  EXPECT_EQ(none.http_status, 200);
}

Json KcReview(const core::KernelCache& kc, const std::string& op = "CREATE") {
  return {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "uid-2"},
        {"kind", {{"group", "kernelcache.io"}, {"version", "v1alpha1"}, {"kind", "KernelCache"}}},
        {"resource",
         {{"group", "kernelcache.io"}, {"version", "v1alpha1"}, {"resource", "kernelcaches"}}},
        {"name", kc.metadata.name},
        {"namespace", "ml"},
        {"operation", op},
        {"object", core::KernelCacheToJson(kc)}}}};
}

TEST(ReviewTest, OverlappingKernelCacheIsDeniedNamingTheOther) {
  core::KernelCache kc = Kc("new", "llama");
  kc.metadata.namespace_.clear();  // as a create may send it: the request's namespace applies
  ReviewAnswer a =
      ReviewKernelCacheValidation(KcReview(kc).dump(), Lister({Kc("old", "llama")}), nullptr);
  ASSERT_EQ(a.http_status, 200) << a.body;
  const Json resp = Json::parse(a.body)["response"];
  EXPECT_EQ(resp["uid"], "uid-2");
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_EQ(resp["status"]["code"], 403);
  const std::string message = resp["status"]["message"];
  EXPECT_NE(message.find("KernelCache new denied"), std::string::npos) << message;
  EXPECT_NE(message.find("spec.podSelector"), std::string::npos) << message;
  EXPECT_NE(message.find("\"old\""), std::string::npos) << message;
}

TEST(ReviewTest, KernelCacheUpdateAndDeleteAreAllowed) {
  auto lister = Lister({Kc("llama", "llama")});
  ReviewAnswer update =
      ReviewKernelCacheValidation(KcReview(Kc("llama", "llama"), "UPDATE").dump(), lister, nullptr);
  EXPECT_EQ(Json::parse(update.body)["response"]["allowed"], true) << update.body;
  Json del = KcReview(Kc("llama", "llama"), "DELETE");
  del["request"]["oldObject"] = del["request"]["object"];
  del["request"].erase("object");
  ReviewAnswer d = ReviewKernelCacheValidation(del.dump(), lister, nullptr);
  ASSERT_EQ(d.http_status, 200) << d.body;
  EXPECT_EQ(Json::parse(d.body)["response"]["allowed"], true);
}

TEST(ReviewTest, MissingStorageClassIsAllowedWithAWarning) {
  core::KernelCache kc = Kc("llama", "llama");
  kc.spec.storage.storage_class_name = "nfs";
  ReviewAnswer a =
      ReviewKernelCacheValidation(KcReview(kc).dump(), Lister({}), [](const std::string&) {
        return StorageClassFacts{Known::kNo, Known::kNo};
      });
  const Json resp = Json::parse(a.body)["response"];
  EXPECT_EQ(resp["allowed"], true);
  ASSERT_EQ(resp["warnings"].size(), 1u);
  EXPECT_NE(resp["warnings"][0].get<std::string>().find("nfs"), std::string::npos);
}

TEST(ReviewTest, MistypedKernelCacheIsDeniedWithTheField) {
  Json review = KcReview(Kc("llama", "llama"));
  review["request"]["object"]["spec"]["consume"]["waitTimeoutSeconds"] = "soon";
  ReviewAnswer a = ReviewKernelCacheValidation(review.dump(), Lister({}), nullptr);
  const Json resp = Json::parse(a.body)["response"];
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_NE(resp["status"]["message"].get<std::string>().find("spec.consume.waitTimeoutSeconds"),
            std::string::npos);
}

}  // namespace
}  // namespace kc::webhook
