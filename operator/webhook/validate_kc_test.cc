#include "operator/webhook/validate_kc.h"

#include <gtest/gtest.h>

#include "testing/objects.h"

namespace kc::webhook {
namespace {

using Labels = std::map<std::string, std::string>;

api::LabelSelector Sel(Labels match, std::vector<api::LabelSelectorRequirement> exprs = {}) {
  api::LabelSelector s;
  s.match_labels = std::move(match);
  s.match_expressions = std::move(exprs);
  return s;
}

core::KernelCache Kc(const std::string& name, api::LabelSelector sel) {
  core::KernelCache kc = testutil::KernelCacheNamed(name);
  kc.spec.pod_selector = std::move(sel);
  return kc;
}

TEST(ValidateKernelCacheTest, SelectorOverlapTable) {
  using R = api::LabelSelectorRequirement;
  struct Case {
    std::string name;
    api::LabelSelector a, b;
    bool overlap;
  } cases[] = {
      {"same labels", Sel({{"app", "llama"}}), Sel({{"app", "llama"}}), true},
      {"conflicting value", Sel({{"app", "llama"}}), Sel({{"app", "mistral"}}), false},
      {"different keys", Sel({{"app", "llama"}}), Sel({{"tier", "gpu"}}), true},
      {"subset", Sel({{"app", "llama"}}), Sel({{"app", "llama"}, {"tier", "gpu"}}), true},
      {"one key conflicts of two", Sel({{"app", "llama"}, {"tier", "gpu"}}),
       Sel({{"app", "llama"}, {"tier", "cpu"}}), false},
      {"In contains the label", Sel({{"app", "llama"}}), Sel({}, {R{"app", "In", {"llama", "x"}}}),
       true},
      {"In excludes the label", Sel({{"app", "llama"}}), Sel({}, {R{"app", "In", {"x", "y"}}}),
       false},
      {"two In sets intersect", Sel({}, {R{"app", "In", {"a", "b"}}}),
       Sel({}, {R{"app", "In", {"b", "c"}}}), true},
      {"two In sets disjoint", Sel({}, {R{"app", "In", {"a"}}}), Sel({}, {R{"app", "In", {"c"}}}),
       false},
      {"NotIn removes the only value", Sel({{"app", "llama"}}),
       Sel({}, {R{"app", "NotIn", {"llama"}}}), false},
      {"NotIn of another value", Sel({{"app", "llama"}}), Sel({}, {R{"app", "NotIn", {"x"}}}),
       true},
      {"DoesNotExist vs label", Sel({{"app", "llama"}}), Sel({}, {R{"app", "DoesNotExist", {}}}),
       false},
      {"DoesNotExist vs Exists", Sel({}, {R{"gpu", "Exists", {}}}),
       Sel({}, {R{"gpu", "DoesNotExist", {}}}), false},
      {"Exists vs NotIn", Sel({}, {R{"gpu", "Exists", {}}}), Sel({}, {R{"gpu", "NotIn", {"x"}}}),
       true},
      {"NotIn and DoesNotExist", Sel({}, {R{"gpu", "NotIn", {"x"}}}),
       Sel({}, {R{"gpu", "DoesNotExist", {}}}), true},
      {"unknown operator matches nothing", Sel({}, {R{"app", "Like", {"l*"}}}),
       Sel({{"app", "llama"}}), false},
      {"empty selector", Sel({}), Sel({{"app", "llama"}}), false},
      {"In set minus NotIn", Sel({}, {R{"app", "In", {"a", "b"}}}),
       Sel({}, {R{"app", "NotIn", {"a"}}}), true},
      {"In set all NotIn", Sel({}, {R{"app", "In", {"a", "b"}}}),
       Sel({}, {R{"app", "NotIn", {"a", "b"}}}), false},
  };
  for (const auto& c : cases) {
    auto ab = SelectorOverlap(c.a, c.b);
    auto ba = SelectorOverlap(c.b, c.a);
    EXPECT_EQ(ab.has_value(), c.overlap) << c.name;
    EXPECT_EQ(ba.has_value(), c.overlap) << c.name << " (reversed)";
    if (ab) {  // the witness is a pod both select
      EXPECT_TRUE(api::SelectorMatches(c.a, *ab)) << c.name;
      EXPECT_TRUE(api::SelectorMatches(c.b, *ab)) << c.name;
    }
  }
}

TEST(ValidateKernelCacheTest, OverlappingSelectorIsDeniedNamingTheOther) {
  auto v = ValidateKernelCache(Kc("new", Sel({{"app", "llama"}})),
                               {Kc("old", Sel({{"app", "llama"}, {"tier", "gpu"}})),
                                Kc("unrelated", Sel({{"app", "mistral"}}))},
                               nullptr);
  EXPECT_FALSE(v.allowed);
  ASSERT_EQ(v.denials.size(), 1u);
  EXPECT_NE(v.denials[0].find("spec.podSelector"), std::string::npos) << v.denials[0];
  EXPECT_NE(v.denials[0].find("\"old\""), std::string::npos) << v.denials[0];
  EXPECT_NE(v.denials[0].find("disjoint"), std::string::npos) << v.denials[0];  // the fix
  EXPECT_NE(v.denials[0].find("tier: \"gpu\""), std::string::npos) << v.denials[0];
}

TEST(ValidateKernelCacheTest, UpdateDoesNotConflictWithItself) {
  auto v = ValidateKernelCache(Kc("llama", Sel({{"app", "llama"}})),
                               {Kc("llama", Sel({{"app", "llama"}}))}, nullptr);
  EXPECT_TRUE(v.allowed);
  EXPECT_TRUE(v.denials.empty());
}

TEST(ValidateKernelCacheTest, DeletingOrOtherNamespaceDoesNotCount) {
  core::KernelCache deleting = Kc("old", Sel({{"app", "llama"}}));
  deleting.metadata.deletion_timestamp = std::chrono::system_clock::now();
  core::KernelCache elsewhere = Kc("other", Sel({{"app", "llama"}}));
  elsewhere.metadata.namespace_ = "prod";
  auto v = ValidateKernelCache(Kc("new", Sel({{"app", "llama"}})), {deleting, elsewhere}, nullptr);
  EXPECT_TRUE(v.allowed) << (v.denials.empty() ? "" : v.denials[0]);
}

TEST(ValidateKernelCacheTest, SharedClaimTable) {
  auto with_claim = [](const std::string& name, const std::string& claim, bool share,
                       const std::string& app) {
    core::KernelCache kc = Kc(name, Sel({{"app", app}}));
    kc.spec.storage = {"", "", claim, share};
    return kc;
  };
  struct Case {
    std::string name;
    core::KernelCache kc, other;
    bool allowed;
    std::string want;  // substring of the denial
  } cases[] = {
      {"different claims", with_claim("a", "c1", false, "a"), with_claim("b", "c2", false, "b"),
       true, ""},
      {"same claim, neither shares", with_claim("a", "c", false, "a"),
       with_claim("b", "c", false, "b"), false, "shareExistingClaim: true on both"},
      {"same claim, only this shares", with_claim("a", "c", true, "a"),
       with_claim("b", "c", false, "b"), false, "\"b\""},
      {"same claim, only the other shares", with_claim("a", "c", false, "a"),
       with_claim("b", "c", true, "b"), false, "spec.storage.existingClaim"},
      {"same claim, both share", with_claim("a", "c", true, "a"), with_claim("b", "c", true, "b"),
       true, ""},
      // existingClaim naming the claim the operator made for another one.
      {"the other's operator claim", with_claim("a", "b-cache", true, "a"),
       Kc("b", Sel({{"app", "b"}})), false, "operator owns"},
  };
  for (const auto& c : cases) {
    auto v = ValidateKernelCache(c.kc, {c.other}, nullptr);
    EXPECT_EQ(v.allowed, c.allowed) << c.name;
    if (!c.allowed) {
      ASSERT_EQ(v.denials.size(), 1u) << c.name;
      EXPECT_NE(v.denials[0].find(c.want), std::string::npos) << c.name << ": " << v.denials[0];
    }
  }
}

TEST(StorageClassWarningTest, OnlyWhenNeitherAClassNorAVolumeHasTheName) {
  constexpr Known kYes = Known::kYes, kNo = Known::kNo, kUnknown = Known::kUnknown;
  struct Case {
    Known class_exists;
    Known volume_names_it;
    bool warns;
  } cases[] = {
      {kYes, kUnknown, false},      // the class exists: volumes not asked
      {kYes, kNo, false},           //
      {kYes, kYes, false},          //
      {kNo, kNo, true},             // nothing can bind the claim
      {kNo, kYes, false},           // a static PersistentVolume of the class binds it
      {kNo, kUnknown, false},       // the volumes could not be listed
      {kUnknown, kUnknown, false},  // the API server did not answer
      {kUnknown, kNo, false},       //
  };
  for (const Case& c : cases) {
    auto w = StorageClassWarning("nfs-fast", {c.class_exists, c.volume_names_it});
    EXPECT_EQ(w.has_value(), c.warns)
        << static_cast<int>(c.class_exists) << "/" << static_cast<int>(c.volume_names_it);
    if (w) {
      EXPECT_NE(w->find("spec.storage.storageClassName"), std::string::npos) << *w;
      EXPECT_NE(w->find("\"nfs-fast\""), std::string::npos) << *w;
      EXPECT_NE(w->find("no PersistentVolume"), std::string::npos) << *w;
    }
  }
}

TEST(ValidateKernelCacheTest, AStorageClassNoVolumeCanBindIsAWarning) {
  core::KernelCache kc = Kc("a", Sel({{"app", "a"}}));
  kc.spec.storage.storage_class_name = "nfs-fast";
  std::vector<std::string> asked;
  auto lookup = [&asked](Known class_exists, Known volume) {
    return [&asked, class_exists, volume](const std::string& name) {
      asked.push_back(name);
      return StorageClassFacts{class_exists, volume};
    };
  };
  auto missing = ValidateKernelCache(kc, {}, lookup(Known::kNo, Known::kNo));
  EXPECT_TRUE(missing.allowed);
  ASSERT_EQ(missing.warnings.size(), 1u);
  EXPECT_NE(missing.warnings[0].find("nfs-fast"), std::string::npos);
  EXPECT_EQ(asked, std::vector<std::string>{"nfs-fast"});
  auto static_volume = ValidateKernelCache(kc, {}, lookup(Known::kNo, Known::kYes));
  EXPECT_TRUE(static_volume.allowed);
  EXPECT_TRUE(static_volume.warnings.empty());
  auto unknown = ValidateKernelCache(kc, {}, nullptr);  // no lookup: no warning
  EXPECT_TRUE(unknown.warnings.empty());
  kc.spec.storage.storage_class_name.clear();  // the cluster's default class: nothing asked
  asked.clear();
  auto default_class = ValidateKernelCache(kc, {}, lookup(Known::kNo, Known::kNo));
  EXPECT_TRUE(default_class.warnings.empty());
  EXPECT_TRUE(asked.empty());
}

TEST(ValidateKernelCacheTest, EveryDenialIsReported) {
  core::KernelCache kc = Kc("a", Sel({{"app", "x"}}));
  kc.spec.storage = {"", "", "c", false};
  core::KernelCache other = Kc("b", Sel({{"app", "x"}}));
  other.spec.storage = {"", "", "c", false};
  auto v = ValidateKernelCache(kc, {other}, nullptr);
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(v.denials.size(), 2u);
}

}  // namespace
}  // namespace kc::webhook
