#include "kube/store.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace kc::kube {
namespace {

Json Obj(const std::string& ns, const std::string& name, const std::string& rv,
         const Json& labels = Json::object()) {
  Json o = {{"metadata", {{"name", name}, {"resourceVersion", rv}, {"labels", labels}}}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  return o;
}

TEST(PackObject, EveryJsonValueComesBackEqual) {
  const Json cases[] = {
      Json(nullptr),
      Json::object(),
      Json::array(),
      Json("plain"),
      Json("ünïcødé \u2603 and \"quotes\" and \\ and \n"),
      Json(true),
      Json(0),
      Json(-1),
      Json(std::numeric_limits<int64_t>::min()),
      Json(std::numeric_limits<uint64_t>::max()),
      Json(0.5),
      Json(1e300),
      Json(3.14159265358979),
      Json::parse(R"({"a": [1, "two", {"three": 3.0}, null, [], {}], "b": {"c": {"d": false}}})"),
  };
  for (const Json& c : cases) {
    const Json back = UnpackObject(PackObject(c));
    EXPECT_EQ(back, c) << c.dump();
    EXPECT_EQ(back.dump(), c.dump()) << "same text for " << c.dump();
  }
}

TEST(PackObject, PackedIsSmallerThanTheText) {
  const Json job = Json::parse(R"({
    "metadata": {"name": "llama-warm-0123", "namespace": "models", "uid": "6c1d8a7e-1f0b-4c53",
      "resourceVersion": "123456", "labels": {"kernelcache.io/name": "llama",
      "kernelcache.io/fingerprint": "fp-0123456789abcdef"}},
    "status": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}})");
  EXPECT_LT(PackObject(job).size(), job.dump().size());
}

TEST(UnpackObject, BytesItDidNotPackGiveADiscardedValueNotAThrow) {
  for (const std::string& bad : {std::string(), std::string("\xff\xff"), std::string("{\"a\":1}"),
                                 std::string("\xa1\x61", 2)}) {
    EXPECT_TRUE(UnpackObject(bad).is_discarded()) << bad.size() << " bytes";
  }
}

TEST(Store, UpsertGetListAndRemoveHandBackWhatWasStored) {
  Store s;
  EXPECT_FALSE(s.Upsert(Obj("ns", "a", "1", {{"app", "x"}})));
  EXPECT_FALSE(s.Upsert(Obj("", "cluster-wide", "2")));
  EXPECT_EQ(s.size(), 2u);
  ASSERT_TRUE(s.Get("ns/a"));
  EXPECT_EQ(*s.Get("ns/a"), Obj("ns", "a", "1", {{"app", "x"}}));
  EXPECT_EQ(*s.Get("cluster-wide"), Obj("", "cluster-wide", "2"));
  EXPECT_FALSE(s.Get("ns/missing"));

  auto previous = s.Upsert(Obj("ns", "a", "3", {{"app", "y"}}));
  ASSERT_TRUE(previous);
  EXPECT_EQ(ObjectResourceVersion(*previous), "1");
  EXPECT_EQ(ObjectResourceVersion(*s.Get("ns/a")), "3");
  EXPECT_EQ(s.List().size(), 2u);
  EXPECT_EQ(s.ListKeys(), (std::vector<std::string>{"cluster-wide", "ns/a"}));

  auto gone = s.Remove("ns/a");
  ASSERT_TRUE(gone);
  EXPECT_EQ(*gone, Obj("ns", "a", "3", {{"app", "y"}}));
  EXPECT_FALSE(s.Remove("ns/a"));
  EXPECT_EQ(s.size(), 1u);
}

TEST(Store, IndexesFollowAnUpdateAndARemove) {
  Store s;
  s.Upsert(Obj("ns", "a", "1", {{"app", "x"}}));
  s.Upsert(Obj("ns", "b", "1", {{"app", "x"}}));
  EXPECT_EQ(s.ByIndex(kLabelIndex, "app=x").size(), 2u);

  s.Upsert(Obj("ns", "a", "2", {{"app", "y"}}));
  const auto xs = s.ByIndex(kLabelIndex, "app=x");
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(ObjectKey(xs[0]), "ns/b");
  ASSERT_EQ(s.ByIndex(kLabelIndex, "app=y").size(), 1u);
  EXPECT_EQ(ObjectResourceVersion(s.ByIndex(kLabelIndex, "app=y")[0]), "2");

  s.Remove("ns/b");
  EXPECT_TRUE(s.ByIndex(kLabelIndex, "app=x").empty());
  EXPECT_EQ(s.IndexValues(kLabelIndex), (std::vector<std::string>{"app=y"}));
  EXPECT_EQ(s.ByIndex(kNamespaceIndex, "ns").size(), 1u);
}

TEST(Store, WithLabelKeysOnlyThoseAreIndexedAndOtherKeysAreFoundByAScan) {
  Store s(StoreOptions{{"kernelcache.io/name"}});
  s.Upsert(Obj("ns", "a", "1", {{"kernelcache.io/name", "llama"}, {"job-name", "a"}}));
  s.Upsert(Obj("ns", "b", "1", {{"kernelcache.io/name", "llama"}, {"job-name", "b"}}));
  s.Upsert(Obj("ns", "c", "1", {{"kernelcache.io/name", "qwen"}}));
  EXPECT_EQ(s.IndexValues(kLabelIndex),
            (std::vector<std::string>{"kernelcache.io/name=llama", "kernelcache.io/name=qwen"}));
  EXPECT_EQ(s.ByIndex(kLabelIndex, "kernelcache.io/name=llama").size(), 2u);
  const auto b = s.ByIndex(kLabelIndex, "job-name=b");  // not indexed: scanned
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(ObjectKey(b[0]), "ns/b");
  EXPECT_TRUE(s.ByIndex(kLabelIndex, "job-name=z").empty());
  s.Upsert(Obj("ns", "a", "2", {{"kernelcache.io/name", "qwen"}}));
  EXPECT_EQ(s.ByIndex(kLabelIndex, "kernelcache.io/name=llama").size(), 1u);
  EXPECT_EQ(s.ByIndex(kLabelIndex, "kernelcache.io/name=qwen").size(), 2u);
  EXPECT_TRUE(s.ByIndex(kLabelIndex, "job-name=a").empty());
}

TEST(Store, AnIndexAddedLaterCoversTheObjectsAlreadyStored) {
  Store s;
  s.Upsert(Obj("ns", "a", "1", {{"tier", "gold"}}));
  ASSERT_TRUE(s.AddIndex("tier", [](const Json& o) {
                 return std::vector<std::string>{o["metadata"]["labels"].value("tier", "")};
               }).ok());
  EXPECT_EQ(s.ByIndex("tier", "gold").size(), 1u);
  EXPECT_FALSE(s.AddIndex("tier", [](const Json&) { return std::vector<std::string>{}; }).ok());
}

}  // namespace
}  // namespace kc::kube
