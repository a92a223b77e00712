// A CustomResourceDefinition installed through the client, then a custom
// object created, patched, and its status written through the subresource.
#include <gtest/gtest.h>

#include <future>

#include "tests/kube/kube_test_util.h"

namespace kc::kube {
namespace {

using testing::ClusterClient;

static auto* const kEnv = ::testing::AddGlobalTestEnvironment(new LocalClusterEnvironment());

constexpr char kNs[] = "kube-crd-test";
const Resource kWidgets{"test.kernelcache.io", "v1", "widgets", "Widget", true};
constexpr char kCrdName[] = "widgets.test.kernelcache.io";

Json WidgetCrd() {
  return Json::parse(R"json({
    "metadata": {"name": "widgets.test.kernelcache.io"},
    "spec": {
      "group": "test.kernelcache.io",
      "scope": "Namespaced",
      "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
      "versions": [{
        "name": "v1", "served": true, "storage": true,
        "subresources": {"status": {}},
        "schema": {"openAPIV3Schema": {
          "type": "object",
          "properties": {
            "spec": {"type": "object", "required": ["size"], "properties": {
              "size": {"type": "integer", "minimum": 1},
              "color": {"type": "string"}}},
            "status": {"type": "object", "properties": {
              "phase": {"type": "string"},
              "observedGeneration": {"type": "integer"}}}
          }}}
      }]
    }
  })json");
}

bool Established(const Json& crd) {
  if (!crd.contains("status") || !crd["status"].contains("conditions")) return false;
  for (const auto& c : crd["status"]["conditions"]) {
    if (c.value("type", "") == "Established" && c.value("status", "") == "True") return true;
  }
  return false;
}

class CrdTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    client_ = ClusterClient().release();
    ASSERT_NE(client_, nullptr);
    ASSERT_TRUE(testing::EnsureNamespace(*client_, kNs).ok());
    auto created = client_->Create(resources::kCustomResourceDefinitions, "", WidgetCrd());
    ASSERT_TRUE(created.ok() || IsAlreadyExists(created.status())) << created.status();
    // Wait for Established through a watch on the CRD itself.
    auto start = client_->Get(resources::kCustomResourceDefinitions, "", kCrdName);
    ASSERT_TRUE(start.ok()) << start.status();
    if (!Established(*start)) {
      WatchOptions options;
      options.field_selector = std::string("metadata.name=") + kCrdName;
      options.resource_version = (*start)["metadata"]["resourceVersion"];
      options.timeout_seconds = 60;
      bool established = false;
      Status s = client_->Watch(resources::kCustomResourceDefinitions, "", options, {},
                                [&](const WatchEvent& e) {
                                  established = Established(e.object);
                                  return !established;
                                });
      ASSERT_TRUE(s.ok()) << s;
      ASSERT_TRUE(established);
    }
  }
  static void TearDownTestSuite() {
    delete client_;
    client_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(client_, nullptr); }

  static Client* client_;
};
Client* CrdTest::client_ = nullptr;

TEST_F(CrdTest, CustomObjectLifecycleWithStatusSubresource) {
  const std::string name = testing::UniqueName("w");
  // The API may answer 404 for a moment after Established while discovery
  // catches up; retry the first create only on that.
  StatusOr<Json> created = NotFoundError("not tried");
  ASSERT_TRUE(testing::Eventually([&] {
    created = client_->Create(
        kWidgets, kNs,
        Json{{"metadata", {{"name", name}}}, {"spec", {{"size", 1}, {"color", "red"}}}});
    return !IsNotFound(created.status());
  }));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)["apiVersion"], "test.kernelcache.io/v1");
  EXPECT_EQ((*created)["metadata"]["generation"], 1);

  // Merge patch of the spec bumps the generation.
  auto patched =
      client_->Patch(kWidgets, kNs, name, PatchType::kMerge, Json{{"spec", {{"size", 3}}}});
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ((*patched)["spec"]["size"], 3);
  EXPECT_EQ((*patched)["spec"]["color"], "red");
  EXPECT_EQ((*patched)["metadata"]["generation"], 2);

  // Status update through the subresource: status changes, the spec in the
  // same body is ignored, the generation stays.
  Json with_status = *patched;
  with_status["status"] = {{"phase", "Ready"}, {"observedGeneration", 2}};
  with_status["spec"]["size"] = 99;
  auto status_updated = client_->UpdateStatus(kWidgets, kNs, with_status);
  ASSERT_TRUE(status_updated.ok()) << status_updated.status();
  EXPECT_EQ((*status_updated)["status"]["phase"], "Ready");
  EXPECT_EQ((*status_updated)["spec"]["size"], 3);
  EXPECT_EQ((*status_updated)["metadata"]["generation"], 2);

  // Spec update through the main resource ignores status.
  Json spec_change = *status_updated;
  spec_change["spec"]["color"] = "blue";
  spec_change["status"]["phase"] = "Overwritten";
  auto spec_updated = client_->Update(kWidgets, kNs, spec_change);
  ASSERT_TRUE(spec_updated.ok()) << spec_updated.status();
  EXPECT_EQ((*spec_updated)["spec"]["color"], "blue");
  EXPECT_EQ((*spec_updated)["status"]["phase"], "Ready");
  EXPECT_EQ((*spec_updated)["metadata"]["generation"], 3);

  // Stale resourceVersion on the status subresource: Conflict.
  auto stale = client_->UpdateStatus(kWidgets, kNs, with_status);
  EXPECT_TRUE(IsConflict(stale.status())) << stale.status();

  // Server-side apply of status through the subresource.
  PatchOptions apply;
  apply.field_manager = "kube-crd-test";
  apply.subresource = "status";
  apply.force = true;
  auto applied =
      client_->Patch(kWidgets, kNs, name, PatchType::kApply,
                     Json{{"status", {{"phase", "Applied"}, {"observedGeneration", 3}}}}, apply);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ((*applied)["status"]["phase"], "Applied");
  EXPECT_EQ((*applied)["spec"]["color"], "blue");

  // Schema validation: Invalid with the field in the causes.
  auto invalid =
      client_->Patch(kWidgets, kNs, name, PatchType::kMerge, Json{{"spec", {{"size", 0}}}});
  ASSERT_EQ(invalid.status().code(), StatusCode::kInvalidArgument) << invalid.status();
  EXPECT_NE(invalid.status().message().find("spec.size"), std::string::npos) << invalid.status();

  auto listed = client_->List(kWidgets, kNs, {});
  ASSERT_TRUE(listed.ok()) << listed.status();
  bool found = false;
  for (const auto& item : listed->items) {
    if (item["metadata"]["name"] == name) {
      found = true;
      EXPECT_EQ(item["kind"], "Widget");
    }
  }
  EXPECT_TRUE(found);

  // Background: a foreground delete of a custom object waits for the
  // garbage collector to discover the new resource type (up to ~30 s).
  DeleteOptions background;
  background.propagation = PropagationPolicy::kBackground;
  EXPECT_TRUE(client_->Delete(kWidgets, kNs, name, background).ok());
  EXPECT_TRUE(
      testing::Eventually([&] { return IsNotFound(client_->Get(kWidgets, kNs, name).status()); }));
}

TEST_F(CrdTest, MissingRequiredFieldIsInvalid) {
  auto created = client_->Create(
      kWidgets, kNs,
      Json{{"metadata", {{"name", testing::UniqueName("bad")}}}, {"spec", {{"color", "red"}}}});
  ASSERT_EQ(created.status().code(), StatusCode::kInvalidArgument) << created.status();
  EXPECT_NE(created.status().message().find("spec.size: Required value"), std::string::npos)
      << created.status();
}

}  // namespace
}  // namespace kc::kube
