// A watch sees every change of an object, in order; 410 Gone after
// compaction; cancellation and the idle timeout end a watch as documented.
#include <gtest/gtest.h>

#include <future>
#include <thread>
#include <vector>

#include "tests/kube/kube_test_util.h"

namespace kc::kube {
namespace {

using resources::kConfigMaps;
using testing::ClusterClient;
using testing::UniqueName;

static auto* const kEnv = ::testing::AddGlobalTestEnvironment(new LocalClusterEnvironment());

constexpr char kNs[] = "kube-watch-test";

class WatchOrderTest : public testing::ClusterTest<kNs> {};

struct Seen {
  WatchEvent::Type type;
  std::string value;  // data.v
  uint64_t rv;
};

TEST_F(WatchOrderTest, SeesEveryChangeInOrder) {
  const std::string name = UniqueName("ordered");
  ListOptions list;
  list.field_selector = "metadata.name=" + name;
  auto start = client_->List(kConfigMaps, kNs, list);
  ASSERT_TRUE(start.ok()) << start.status();

  WatchOptions options;
  options.field_selector = list.field_selector;
  options.resource_version = start->resource_version;
  options.timeout_seconds = 120;
  std::vector<Seen> seen;
  auto watch = std::async(std::launch::async, [&] {
    return client_->Watch(kConfigMaps, kNs, options, {}, [&](const WatchEvent& e) {
      if (e.type == WatchEvent::Type::kBookmark) return true;
      const Json& data = e.object.contains("data") ? e.object["data"] : Json::object();
      seen.push_back({e.type, data.value("v", ""),
                      std::stoull(e.object["metadata"]["resourceVersion"].get<std::string>())});
      return e.type != WatchEvent::Type::kDeleted;
    });
  });

  // The watch starts from the list's resourceVersion, so changes made before
  // the stream is open are still delivered.
  constexpr int kModifications = 6;
  ASSERT_TRUE(
      client_
          ->Create(kConfigMaps, kNs, Json{{"metadata", {{"name", name}}}, {"data", {{"v", "0"}}}})
          .ok());
  for (int i = 1; i <= kModifications; ++i) {
    ASSERT_TRUE(client_
                    ->Patch(kConfigMaps, kNs, name, PatchType::kMerge,
                            Json{{"data", {{"v", std::to_string(i)}}}})
                    .ok());
  }
  ASSERT_TRUE(client_->Delete(kConfigMaps, kNs, name).ok());

  ASSERT_EQ(watch.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  Status s = watch.get();
  EXPECT_TRUE(s.ok()) << s;
  ASSERT_EQ(seen.size(), static_cast<size_t>(kModifications + 2));
  EXPECT_EQ(seen.front().type, WatchEvent::Type::kAdded);
  EXPECT_EQ(seen.front().value, "0");
  for (int i = 1; i <= kModifications; ++i) {
    EXPECT_EQ(seen[i].type, WatchEvent::Type::kModified) << i;
    EXPECT_EQ(seen[i].value, std::to_string(i)) << i;
  }
  EXPECT_EQ(seen.back().type, WatchEvent::Type::kDeleted);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i].rv, seen[i - 1].rv) << i;
}

// The API server's watch cache keeps serving old resourceVersions after an
// etcd compaction until it is rebuilt; after a restart it starts at the
// current revision, so a client resuming from before the compaction gets 410
// (the case a relist must handle).
TEST_F(WatchOrderTest, ResumeFromCompactedResourceVersionIsGone) {
  const std::string run = UniqueName("gone");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        client_
            ->Create(kConfigMaps, kNs,
                     Json{{"metadata",
                           {{"name", run + "-" + std::to_string(i)}, {"labels", {{"run", run}}}}}})
            .ok());
  }
  ListOptions paged;
  paged.label_selector = "run=" + run;
  paged.limit = 1;
  auto first_page = client_->List(kConfigMaps, kNs, paged);
  ASSERT_TRUE(first_page.ok()) << first_page.status();
  ASSERT_FALSE(first_page->continue_token.empty());
  const std::string old_rv = first_page->resource_version;
  ASSERT_TRUE(
      client_
          ->Patch(kConfigMaps, kNs, run + "-0", PatchType::kMerge, Json{{"data", {{"v", "after"}}}})
          .ok());

  LocalCluster* cluster = LocalClusterEnvironment::cluster();
  ASSERT_TRUE(cluster->Compact().ok());
  ASSERT_TRUE(cluster->RestartApiServer().ok());

  WatchOptions options;
  options.resource_version = old_rv;
  options.timeout_seconds = 30;
  int events = 0;
  Status s = client_->Watch(kConfigMaps, kNs, options, {}, [&](const WatchEvent&) {
    ++events;
    return true;
  });
  EXPECT_TRUE(IsGone(s)) << s;
  EXPECT_EQ(events, 0);

  paged.continue_token = first_page->continue_token;
  auto next_page = client_->List(kConfigMaps, kNs, paged);
  EXPECT_TRUE(IsGone(next_page.status())) << next_page.status();

  // A fresh list works and shows the final state.
  auto fresh = client_->Get(kConfigMaps, kNs, run + "-0");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ((*fresh)["data"]["v"], "after");
}

// Stopping the API server ends an open watch promptly (no hang), requests
// fail with Unavailable while it is down, and the same client works again
// once it is back. The restarted server's watch cache starts at the current
// revision: resuming from a resourceVersion older than that is Gone (the
// caller relists); resuming from the last one seen may be served or Gone,
// depending on whether anything else was written before the stop.
TEST_F(WatchOrderTest, SurvivesApiServerStopAndStart) {
  const std::string name = UniqueName("restart");
  auto created = client_->Create(kConfigMaps, kNs, Json{{"metadata", {{"name", name}}}});
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string created_rv = (*created)["metadata"]["resourceVersion"];

  WatchOptions options;
  options.field_selector = "metadata.name=" + name;
  options.resource_version = created_rv;
  std::promise<std::string> seen_rv;
  auto watch = std::async(std::launch::async, [&] {
    bool first = true;
    return client_->Watch(kConfigMaps, kNs, options, {}, [&](const WatchEvent& e) {
      if (first && e.type == WatchEvent::Type::kModified) {
        first = false;
        seen_rv.set_value(e.object["metadata"]["resourceVersion"]);
      }
      return true;
    });
  });
  ASSERT_TRUE(
      client_->Patch(kConfigMaps, kNs, name, PatchType::kMerge, Json{{"data", {{"v", "before"}}}})
          .ok());
  auto seen_future = seen_rv.get_future();
  ASSERT_EQ(seen_future.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  const std::string last_rv = seen_future.get();

  LocalCluster* cluster = LocalClusterEnvironment::cluster();
  ASSERT_TRUE(cluster->StopApiServer().ok());
  ASSERT_EQ(watch.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  Status ended = watch.get();
  EXPECT_TRUE(ended.ok() || ended.code() == StatusCode::kUnavailable) << ended;

  auto down = client_->Get(kConfigMaps, kNs, name);
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable) << down.status();

  ASSERT_TRUE(cluster->StartApiServer().ok());
  auto patched =
      client_->Patch(kConfigMaps, kNs, name, PatchType::kMerge, Json{{"data", {{"v", "after"}}}});
  ASSERT_TRUE(patched.ok()) << patched.status();

  // Older than the restarted cache: Gone.
  Status too_old =
      client_->Watch(kConfigMaps, kNs, options, {}, [](const WatchEvent&) { return false; });
  EXPECT_TRUE(IsGone(too_old)) << too_old;

  // From the last resourceVersion seen: the change made after the restart,
  // or Gone (then a relist has the final state).
  options.resource_version = last_rv;
  std::vector<std::string> values;
  Status resumed = client_->Watch(kConfigMaps, kNs, options, {}, [&](const WatchEvent& e) {
    if (e.type == WatchEvent::Type::kBookmark) return true;
    values.push_back(e.object["data"].value("v", ""));
    return values.back() != "after";
  });
  if (IsGone(resumed)) {
    auto relisted = client_->Get(kConfigMaps, kNs, name);
    ASSERT_TRUE(relisted.ok()) << relisted.status();
    EXPECT_EQ((*relisted)["data"]["v"], "after");
  } else {
    EXPECT_TRUE(resumed.ok()) << resumed;
    EXPECT_EQ(values, std::vector<std::string>{"after"});
  }
  EXPECT_TRUE(client_->Delete(kConfigMaps, kNs, name).ok());
}

TEST_F(WatchOrderTest, StopTokenCancelsAnOpenWatch) {
  std::stop_source stop;
  std::promise<void> first_event;
  bool signalled = false;
  WatchOptions options;  // from now: the server sends nothing until a change
  options.allow_bookmarks = false;
  const std::string name = UniqueName("cancel");
  auto watch = std::async(std::launch::async, [&] {
    return client_->Watch(kConfigMaps, kNs, options, stop.get_token(), [&](const WatchEvent& e) {
      if (!signalled) {
        signalled = true;
        first_event.set_value();
      }
      return true;
    });
  });
  ASSERT_TRUE(client_->Create(kConfigMaps, kNs, Json{{"metadata", {{"name", name}}}}).ok());
  ASSERT_EQ(first_event.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  const auto requested = std::chrono::steady_clock::now();
  stop.request_stop();
  ASSERT_EQ(watch.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - requested, std::chrono::seconds(5));
  Status s = watch.get();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s;
  EXPECT_TRUE(client_->Delete(kConfigMaps, kNs, name).ok());
}

TEST_F(WatchOrderTest, QuietStreamHitsIdleTimeout) {
  auto config = LoadKubeconfig(LocalClusterEnvironment::cluster()->kubeconfig_path());
  ASSERT_TRUE(config.ok());
  config->watch_idle_timeout = std::chrono::seconds(2);
  auto client = NewClient(*config);
  ASSERT_TRUE(client.ok()) << client.status();
  WatchOptions options;
  options.allow_bookmarks = false;
  options.label_selector = "never=" + UniqueName("quiet");
  options.timeout_seconds = 60;
  const auto started = std::chrono::steady_clock::now();
  Status s =
      (*client)->Watch(kConfigMaps, kNs, options, {}, [](const WatchEvent&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
}

TEST_F(WatchOrderTest, ServerTimeoutEndsWatchCleanly) {
  WatchOptions options;
  options.allow_bookmarks = false;
  options.label_selector = "never=" + UniqueName("servertimeout");
  options.timeout_seconds = 1;
  int events = 0;
  const auto start = std::chrono::steady_clock::now();
  Status s = client_->Watch(kConfigMaps, kNs, options, {}, [&events](const WatchEvent&) {
    ++events;
    return true;
  });
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // The server ended it: a clean end (the client's idle timeout, far away,
  // would be DeadlineExceeded; a stop, Cancelled), with no event (nothing
  // matches the selector), not before the server's 1 s. No upper bound: a
  // loaded machine only makes it later.
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(events, 0);
  EXPECT_GE(elapsed, std::chrono::milliseconds(900));
}

}  // namespace
}  // namespace kc::kube
