// EventRecorder against the real API server: Events pass the server's
// validation, land in the involved object's namespace (default for
// cluster-scoped objects), and repeats are aggregated into one Event whose
// count and lastTimestamp are patched.
#include "kube/event_recorder.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/kube/kube_test_util.h"

namespace kc::kube {
namespace {

using testing::ClusterClient;
using testing::UniqueName;

static auto* const kEnv = ::testing::AddGlobalTestEnvironment(new LocalClusterEnvironment());

constexpr char kNs[] = "kube-events-test";

class EventRecorderIntegrationTest : public testing::ClusterTest<kNs> {
 protected:
  std::vector<Json> EventsAbout(const std::string& ns, const std::string& name) {
    ListOptions o;
    o.field_selector = "involvedObject.name=" + name;
    auto list = client_->List(resources::kEvents, ns, o);
    EXPECT_TRUE(list.ok()) << list.status();
    return list.ok() ? list->items : std::vector<Json>{};
  }
};

TEST_F(EventRecorderIntegrationTest, CreatesAndAggregatesEvents) {
  const std::string name = UniqueName("evented");
  auto cm = client_->Create(resources::kConfigMaps, kNs, Json{{"metadata", {{"name", name}}}});
  ASSERT_TRUE(cm.ok()) << cm.status();
  std::vector<Status> errors;
  EventRecorderOptions options;
  options.component = "kernelcache-test";
  options.host = "test-host";
  options.on_error = [&](const Status& s) { errors.push_back(s); };
  EventRecorder recorder(*client_, options);
  const ObjectReference ref = ReferenceTo(*cm);

  for (int i = 0; i < 3; ++i) {
    recorder.Eventf(ref, EventType::kNormal, "Warming", "warmup job %s started", "j-1");
  }
  recorder.Event(ref, EventType::kWarning, "CacheInvalid", "manifest digest mismatch");
  ASSERT_TRUE(errors.empty()) << errors.front();

  std::vector<Json> events = EventsAbout(kNs, name);
  ASSERT_EQ(events.size(), 2u);
  int checked = 0;
  for (const Json& e : events) {
    EXPECT_EQ(e["involvedObject"]["uid"], (*cm)["metadata"]["uid"]);
    EXPECT_EQ(e["involvedObject"]["kind"], "ConfigMap");
    EXPECT_EQ(e["source"]["component"], "kernelcache-test");
    EXPECT_EQ(e["reportingComponent"], "kernelcache-test");
    if (e["reason"] == "Warming") {
      EXPECT_EQ(e["count"], 3);
      EXPECT_EQ(e["type"], "Normal");
      EXPECT_EQ(e["message"], "warmup job j-1 started");
      ++checked;
    } else {
      EXPECT_EQ(e["reason"], "CacheInvalid");
      EXPECT_EQ(e["type"], "Warning");
      EXPECT_EQ(e["count"], 1);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);
}

TEST_F(EventRecorderIntegrationTest, ClusterScopedObjectEventsGoToDefault) {
  const std::string ns_name = UniqueName("evns");
  auto ns = client_->Create(resources::kNamespaces, "", Json{{"metadata", {{"name", ns_name}}}});
  ASSERT_TRUE(ns.ok()) << ns.status();
  std::vector<Status> errors;
  EventRecorderOptions options;
  options.component = "kernelcache-test";
  options.on_error = [&](const Status& s) { errors.push_back(s); };
  EventRecorder recorder(*client_, options);
  recorder.Event(ReferenceTo(*ns), EventType::kNormal, "Seen", "namespace observed");
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(EventsAbout("default", ns_name).size(), 1u);
  EXPECT_TRUE(client_->Delete(resources::kNamespaces, "", ns_name).ok());
}

}  // namespace
}  // namespace kc::kube
