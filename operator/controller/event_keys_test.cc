#include "operator/controller/event_keys.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

using Json = kube::Json;

Json Labelled(const std::string& ns, const Json& labels) {
  return {{"metadata", {{"name", "x"}, {"namespace", ns}, {"labels", labels}}}};
}

TEST(EventKeysTest, OwnerKey) {
  EXPECT_EQ(OwnerKey(Labelled("ml", {{"kernelcache.io/name", "llama"}})), "ml/llama");
  EXPECT_EQ(OwnerKey(Labelled("ml", {{"app", "llama"}})), std::nullopt);
  EXPECT_EQ(OwnerKey(Json::object()), std::nullopt);
  EXPECT_EQ(OwnerKey(Json("not an object")), std::nullopt);
  EXPECT_EQ(OwnerKey(Labelled("ml", {{"kernelcache.io/name", 7}})), std::nullopt);
}

TEST(EventKeysTest, ConsumerKey) {
  EXPECT_EQ(ConsumerKey(Labelled("ml", {{"kernelcache.io/consumer", "llama"}})), "ml/llama");
  EXPECT_EQ(ConsumerKey(Labelled("ml", {{"kernelcache.io/consumer", ""}})), std::nullopt);
  EXPECT_EQ(ConsumerKey(Labelled("ml", {{"kernelcache.io/name", "llama"}})), std::nullopt);
}

TEST(EventKeysTest, PvcKeysFromOwnersAndExistingClaims) {
  const Json pvc = {
      {"metadata",
       {{"name", "shared-claim"},
        {"namespace", "ml"},
        {"ownerReferences",
         {{{"apiVersion", "kernelcache.io/v1alpha1"}, {"kind", "KernelCache"}, {"name", "owner"}},
          {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "not-a-kc"}}}}}}};
  auto kc = [](const std::string& ns, const std::string& name, const Json& storage) {
    return Json{{"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec", {{"storage", storage}}}};
  };
  const std::vector<Json> kcs = {
      kc("ml", "names-it", {{"existingClaim", "shared-claim"}}),
      kc("ml", "other-claim", {{"existingClaim", "another"}}),
      kc("other", "names-it-elsewhere", {{"existingClaim", "shared-claim"}}),
      kc("ml", "no-storage", nullptr),
      {{"metadata", {{"name", "no-spec"}, {"namespace", "ml"}}}},
  };
  EXPECT_EQ(PvcKeys(pvc, kcs), (std::vector<std::string>{"ml/owner", "ml/names-it"}));
  EXPECT_TRUE(PvcKeys(Json::object(), {}).empty());
}

TEST(EventKeysTest, NodeSelectorOfKeepsStringsOnly) {
  const Json kc = {{"spec", {{"nodeSelector", {{"gpu", "h200"}, {"count", 8}, {"zone", "a"}}}}}};
  EXPECT_EQ(NodeSelectorOf(kc),
            (std::map<std::string, std::string>{{"gpu", "h200"}, {"zone", "a"}}));
  EXPECT_TRUE(NodeSelectorOf({{"spec", {{"nodeSelector", "gpu"}}}}).empty());
  EXPECT_TRUE(NodeSelectorOf(Json::array()).empty());
}

}  // namespace
}  // namespace kc::op
