#include "kube/informer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "kube/testing/fake_client.h"
#include "kube/testing/fake_clock.h"
#include "testing/eventually.h"

namespace kc::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Resource& kCm = resources::kConfigMaps;

Json Cm(const std::string& name, const std::string& value, const Json& labels = Json::object()) {
  return {{"metadata", {{"name", name}, {"labels", labels}}}, {"data", {{"v", value}}}};
}

using kc::testutil::Eventually;

// Records handler calls as strings: "add ns/a", "update ns/a 1->2", "delete ns/a unknown".
class Recorder {
 public:
  EventHandler Handler() {
    EventHandler h;
    h.on_add = [this](const Json& o) { Push("add " + ObjectKey(o)); };
    h.on_update = [this](const Json& a, const Json& b) {
      Push("update " + ObjectKey(b) + " " + a["data"]["v"].get<std::string>() + "->" +
           b["data"]["v"].get<std::string>());
    };
    h.on_delete = [this](const Json& o, bool unknown) {
      Push("delete " + ObjectKey(o) + (unknown ? " unknown" : ""));
    };
    return h;
  }
  std::vector<std::string> events() const {
    std::lock_guard<std::mutex> l(mu_);
    return events_;
  }
  bool Has(const std::string& e) const {
    auto ev = events();
    return std::find(ev.begin(), ev.end(), e) != ev.end();
  }
  size_t Count(const std::string& prefix) const {
    auto ev = events();
    return std::count_if(ev.begin(), ev.end(),
                         [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  }

 private:
  void Push(std::string e) {
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(std::move(e));
  }
  mutable std::mutex mu_;
  std::vector<std::string> events_;
};

InformerOptions FastOptions() {
  InformerOptions o;
  o.page_size = 2;
  o.backoff_base = milliseconds(1);
  o.backoff_max = milliseconds(20);
  o.on_error = [](const Status&) {};
  return o;
}

std::string Value(const Informer& inf, const std::string& key) {
  auto obj = inf.store().Get(key);
  return obj ? (*obj)["data"]["v"].get<std::string>() : "<none>";
}

TEST(InformerTest, ListsPagedThenFollowsTheWatch) {
  FakeClient client;
  for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(client.Create(kCm, "ns", Cm(n, "1")).ok());
  ASSERT_TRUE(client.Create(kCm, "elsewhere", Cm("x", "1")).ok());
  Informer inf(client, kCm, "ns", {}, FastOptions());
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  EXPECT_FALSE(inf.HasSynced());
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  EXPECT_EQ(inf.store().size(), 3u);
  EXPECT_EQ(rec.Count("add "), 3u);
  EXPECT_EQ(inf.ListCount(), 1);

  ASSERT_TRUE(client.Create(kCm, "ns", Cm("d", "1")).ok());
  ASSERT_TRUE(client.Patch(kCm, "ns", "a", PatchType::kMerge, {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(client.Delete(kCm, "ns", "b").ok());
  ASSERT_TRUE(Eventually([&] { return rec.Has("delete ns/b"); }));
  EXPECT_EQ(rec.events(), (std::vector<std::string>{"add ns/a", "add ns/b", "add ns/c", "add ns/d",
                                                    "update ns/a 1->2", "delete ns/b"}));
  EXPECT_EQ(Value(inf, "ns/a"), "2");
  EXPECT_FALSE(inf.store().Get("ns/b"));
  EXPECT_EQ(inf.LastResourceVersion(), std::to_string(client.resource_version()));
}

TEST(InformerTest, IndexesByNamespaceLabelOwnerAndCustom) {
  FakeClient client;
  Json owned = Cm("owned", "1", {{"app", "llama"}});
  owned["metadata"]["ownerReferences"] = {{{"uid", "owner-1"}, {"kind", "Job"}, {"name", "j"}}};
  ASSERT_TRUE(client.Create(kCm, "ns1", owned).ok());
  ASSERT_TRUE(client.Create(kCm, "ns1", Cm("plain", "2", {{"app", "other"}})).ok());
  ASSERT_TRUE(client.Create(kCm, "ns2", Cm("far", "1", {{"app", "llama"}})).ok());
  Informer inf(client, kCm, "", {}, FastOptions());
  ASSERT_TRUE(inf.AddIndex("by-value",
                           [](const Json& o) {
                             return std::vector<std::string>{o["data"]["v"].get<std::string>()};
                           })
                  .ok());
  EXPECT_EQ(inf.AddIndex(kLabelIndex, LabelIndexFunc).code(), StatusCode::kInvalidArgument);
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  EXPECT_EQ(inf.store().ByIndex(kNamespaceIndex, "ns1").size(), 2u);
  EXPECT_EQ(inf.store().ByIndex(kLabelIndex, "app=llama").size(), 2u);
  auto by_owner = inf.store().ByIndex(kOwnerIndex, "owner-1");
  ASSERT_EQ(by_owner.size(), 1u);
  EXPECT_EQ(ObjectKey(by_owner[0]), "ns1/owned");
  EXPECT_EQ(inf.store().ByIndex("by-value", "1").size(), 2u);

  // Indexes follow updates: relabelling moves the object between values.
  ASSERT_TRUE(client
                  .Patch(kCm, "ns1", "plain", PatchType::kMerge,
                         {{"metadata", {{"labels", {{"app", "llama"}}}}}})
                  .ok());
  ASSERT_TRUE(
      Eventually([&] { return inf.store().ByIndex(kLabelIndex, "app=llama").size() == 3; }));
  EXPECT_TRUE(inf.store().ByIndex(kLabelIndex, "app=other").empty());
  ASSERT_TRUE(client.Delete(kCm, "ns1", "owned").ok());
  ASSERT_TRUE(Eventually([&] { return inf.store().ByIndex(kOwnerIndex, "owner-1").empty(); }));
}

TEST(InformerTest, LabelSelectorLimitsTheCache) {
  FakeClient client;
  ASSERT_TRUE(client.Create(kCm, "ns", Cm("in", "1", {{"app", "x"}})).ok());
  ASSERT_TRUE(client.Create(kCm, "ns", Cm("out", "1", {{"app", "y"}})).ok());
  ListOptions selector;
  selector.label_selector = "app=x";
  Informer inf(client, kCm, "ns", selector, FastOptions());
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  EXPECT_EQ(inf.store().ListKeys(), std::vector<std::string>{"ns/in"});
  // Relabelled out of the selector: deleted from the cache.
  ASSERT_TRUE(
      client.Patch(kCm, "ns", "in", PatchType::kMerge, {{"metadata", {{"labels", {{"app", "z"}}}}}})
          .ok());
  ASSERT_TRUE(Eventually([&] { return inf.store().size() == 0; }));
}

TEST(InformerTest, DroppedConnectionResumesFromLastResourceVersionWithoutRelist) {
  FakeClient client;
  ASSERT_TRUE(client.Create(kCm, "ns", Cm("a", "1")).ok());
  Informer inf(client, kCm, "ns", {}, FastOptions());
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  ASSERT_TRUE(client.WaitForOpenWatches(1));
  ASSERT_TRUE(client.Patch(kCm, "ns", "a", PatchType::kMerge, {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(Eventually([&] { return Value(inf, "ns/a") == "2"; }));
  const std::string seen_rv = inf.LastResourceVersion();

  // The connection drops; the next two attempts are refused (server down).
  client.FailNextWatches(2, UnavailableError("connection refused"));
  client.DisconnectWatches();
  ASSERT_TRUE(client.WaitForWatchCalls(4));
  ASSERT_TRUE(client.WaitForOpenWatches(1));
  auto rvs = client.WatchResourceVersions();
  ASSERT_GE(rvs.size(), 4u);
  EXPECT_EQ(rvs[1], seen_rv);
  EXPECT_EQ(rvs[3], seen_rv);
  ASSERT_TRUE(client.Patch(kCm, "ns", "a", PatchType::kMerge, {{"data", {{"v", "3"}}}}).ok());
  ASSERT_TRUE(Eventually([&] { return Value(inf, "ns/a") == "3"; }));
  // The store is written before the handlers run: wait for the handler too.
  ASSERT_TRUE(Eventually([&] { return rec.events().size() >= 3; }));
  EXPECT_EQ(inf.ListCount(), 1);  // resumed, never relisted
  EXPECT_EQ(rec.events(),
            (std::vector<std::string>{"add ns/a", "update ns/a 1->2", "update ns/a 2->3"}));
}

TEST(InformerTest, BookmarkAdvancesTheResumePoint) {
  FakeClient client;
  ASSERT_TRUE(client.Create(kCm, "ns", Cm("a", "1")).ok());
  Informer inf(client, kCm, "ns", {}, FastOptions());
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  ASSERT_TRUE(client.WaitForOpenWatches(1));
  // Writes elsewhere move the resourceVersion without events for this watch.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client.Create(resources::kSecrets, "ns", Cm("s" + std::to_string(i), "x")).ok());
  }
  const std::string now = std::to_string(client.resource_version());
  client.SendBookmark();
  ASSERT_TRUE(Eventually([&] { return inf.LastResourceVersion() == now; }));
  client.Compact();  // older resume points are gone now; the bookmark's is not
  client.DisconnectWatches();
  ASSERT_TRUE(client.WaitForWatchCalls(2));
  ASSERT_TRUE(client.WaitForOpenWatches(1));
  EXPECT_EQ(client.WatchResourceVersions()[1], now);
  EXPECT_EQ(inf.ListCount(), 1);
}

TEST(InformerTest, GoneRelistsAndDiffsIncludingDeletionWhileDisconnected) {
  FakeClient client;
  for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(client.Create(kCm, "ns", Cm(n, "1")).ok());
  Informer inf(client, kCm, "ns", {}, FastOptions());
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  ASSERT_TRUE(client.WaitForOpenWatches(1));

  // Disconnected (every reconnect refused) while b is deleted, c changed, d
  // created; then the history is compacted, so the resume gets 410 Gone.
  client.FailNextWatches(1000000, UnavailableError("connection refused"));
  client.DisconnectWatches();
  ASSERT_TRUE(client.WaitForWatchCalls(3));
  ASSERT_TRUE(client.Delete(kCm, "ns", "b").ok());
  ASSERT_TRUE(client.Patch(kCm, "ns", "c", PatchType::kMerge, {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(client.Create(kCm, "ns", Cm("d", "1")).ok());
  client.Compact();
  client.FailNextWatches(0, OkStatus());

  ASSERT_TRUE(Eventually([&] { return inf.ListCount() == 2 && client.OpenWatches() == 1; }));
  EXPECT_EQ(inf.store().ListKeys(), (std::vector<std::string>{"ns/a", "ns/c", "ns/d"}));
  EXPECT_EQ(Value(inf, "ns/c"), "2");
  EXPECT_TRUE(rec.Has("delete ns/b unknown"));
  EXPECT_TRUE(rec.Has("update ns/c 1->2"));
  EXPECT_TRUE(rec.Has("add ns/d"));
  EXPECT_EQ(rec.Count("update ns/a"), 0u);  // unchanged objects are not re-announced

  // After the relist the watch continues from the new list's version.
  ASSERT_TRUE(client.Create(kCm, "ns", Cm("e", "1")).ok());
  ASSERT_TRUE(Eventually([&] { return rec.Has("add ns/e"); }));
}

TEST(InformerTest, GoneMidStreamAlsoRelists) {
  FakeClient client;
  ASSERT_TRUE(client.Create(kCm, "ns", Cm("a", "1")).ok());
  Informer inf(client, kCm, "ns", {}, FastOptions());
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  ASSERT_TRUE(client.WaitForOpenWatches(1));
  client.DisconnectWatches(GoneError("too old resource version"));
  ASSERT_TRUE(Eventually([&] { return inf.ListCount() == 2; }));
}

// Every object the store or a handler sees went through the transform: the
// paged list, watch adds, updates (old and new), deletes, and a relist.
TEST(InformerTest, TransformShapesTheCacheAndEveryHandlerCall) {
  FakeClient client;
  auto secret = [](const std::string& name, const std::string& v) {
    Json o = Cm(name, v);
    o["data"]["secret"] = "s3cr3t";
    o["metadata"]["managedFields"] = {{{"manager", "kubectl"}}};
    return o;
  };
  for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(client.Create(kCm, "ns", secret(n, "1")).ok());
  InformerOptions options = FastOptions();
  std::atomic<int> calls{0};
  options.transform = [&](const Json& o) {
    ++calls;
    return Project(o,
                   {{"metadata", {{"name", true}, {"namespace", true}, {"resourceVersion", true}}},
                    {"data", {{"v", true}}}});
  };
  Informer inf(client, kCm, "ns", {}, options);
  std::mutex mu;
  std::vector<Json> seen;
  EventHandler h;
  h.on_add = [&](const Json& o) {
    std::lock_guard<std::mutex> l(mu);
    seen.push_back(o);
  };
  h.on_update = [&](const Json& a, const Json& b) {
    std::lock_guard<std::mutex> l(mu);
    seen.push_back(a);
    seen.push_back(b);
  };
  h.on_delete = [&](const Json& o, bool) {
    std::lock_guard<std::mutex> l(mu);
    seen.push_back(o);
  };
  inf.AddEventHandler(h);
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  ASSERT_TRUE(client.WaitForOpenWatches(1));
  ASSERT_TRUE(client.Create(kCm, "ns", secret("d", "1")).ok());
  ASSERT_TRUE(client.Patch(kCm, "ns", "a", PatchType::kMerge, {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(client.Delete(kCm, "ns", "b").ok());
  ASSERT_TRUE(Eventually([&] { return !inf.store().Get("ns/b"); }));
  client.DisconnectWatches(GoneError("too old resource version"));  // relist
  ASSERT_TRUE(Eventually([&] { return inf.ListCount() == 2; }));
  ASSERT_TRUE(client.Patch(kCm, "ns", "c", PatchType::kMerge, {{"data", {{"v", "3"}}}}).ok());
  ASSERT_TRUE(Eventually([&] { return Value(inf, "ns/c") == "3"; }));

  EXPECT_GE(calls.load(), 9);  // 3 listed, d, a, b, 3 relisted, c
  for (const Json& o : inf.store().List()) {
    EXPECT_FALSE(o["data"].contains("secret")) << o.dump();
    EXPECT_FALSE(o["metadata"].contains("managedFields")) << o.dump();
  }
  std::lock_guard<std::mutex> l(mu);
  EXPECT_GE(seen.size(), 7u);  // 3 adds, add d, update a (2), delete b, update c (2)
  for (const Json& o : seen) {
    EXPECT_EQ(o["data"].size(), 1u) << o.dump();
    EXPECT_FALSE(o["metadata"].contains("managedFields")) << o.dump();
  }
}

// `keep`: handlers see each new object whole; the store, an update's old
// object and a relist's delete see only what `keep` kept, and a relist
// still tells unchanged objects (same resourceVersion) from changed ones.
TEST(InformerTest, KeepShapesTheStoreNotTheNewObjects) {
  FakeClient client;
  for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(client.Create(kCm, "ns", Cm(n, "1")).ok());
  InformerOptions options = FastOptions();
  options.keep = [](const Json& o) {
    return Project(
        o, {{"metadata", {{"name", true}, {"namespace", true}, {"resourceVersion", true}}}});
  };
  Informer inf(client, kCm, "ns", {}, options);
  std::mutex mu;
  std::vector<std::string> seen;  // "<event> <key> <data.v of each object, '-' when absent>"
  auto v = [](const Json& o) {
    return o.contains("data") ? o["data"]["v"].get<std::string>() : std::string("-");
  };
  auto push = [&](std::string e) {
    std::lock_guard<std::mutex> l(mu);
    seen.push_back(std::move(e));
  };
  EventHandler h;
  h.on_add = [&](const Json& o) { push("add " + ObjectKey(o) + " " + v(o)); };
  h.on_update = [&](const Json& a, const Json& b) {
    push("update " + ObjectKey(b) + " " + v(a) + "->" + v(b));
  };
  h.on_delete = [&](const Json& o, bool) { push("delete " + ObjectKey(o) + " " + v(o)); };
  inf.AddEventHandler(h);
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  ASSERT_TRUE(client.WaitForOpenWatches(1));
  ASSERT_TRUE(client.Patch(kCm, "ns", "a", PatchType::kMerge, {{"data", {{"v", "2"}}}}).ok());
  ASSERT_TRUE(client.Delete(kCm, "ns", "b").ok());
  ASSERT_TRUE(Eventually([&] { return !inf.store().Get("ns/b"); }));
  // A relist that finds c changed and a gone: the changes are made while the
  // informer can neither list nor watch, after its watch ended in 410 Gone.
  std::atomic<bool> down{true};
  std::atomic<int> refused_lists{0};
  client.SetReactor([&](const FakeAction& a) {
    if (!down || (a.verb != "list" && a.verb != "watch")) return OkStatus();
    if (a.verb == "list") ++refused_lists;
    return UnavailableError("down");
  });
  client.DisconnectWatches(GoneError("too old resource version"));
  ASSERT_TRUE(Eventually([&] { return refused_lists > 0; }));  // the watch has ended
  ASSERT_TRUE(client.Patch(kCm, "ns", "c", PatchType::kMerge, {{"data", {{"v", "3"}}}}).ok());
  ASSERT_TRUE(client.Delete(kCm, "ns", "a").ok());
  down = false;
  ASSERT_TRUE(Eventually([&] { return inf.ListCount() == 2 && !inf.store().Get("ns/a"); }));

  for (const Json& o : inf.store().List()) {
    EXPECT_FALSE(o.contains("data")) << o.dump();
    EXPECT_FALSE(o["metadata"].value("resourceVersion", "").empty()) << o.dump();
  }
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(seen,
            (std::vector<std::string>{"add ns/a 1", "add ns/b 1", "add ns/c 1", "update ns/a -->2",
                                      "delete ns/b 1", "update ns/c -->3", "delete ns/a -"}));
}

TEST(InformerTest, ResyncRedeliversEveryObjectPerPeriod) {
  FakeClient client;
  FakeClock clock;
  for (const char* n : {"a", "b"}) ASSERT_TRUE(client.Create(kCm, "ns", Cm(n, "1")).ok());
  InformerOptions o = FastOptions();
  o.clock = &clock;
  o.resync_period = seconds(30);
  Informer inf(client, kCm, "ns", {}, o);
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  EXPECT_EQ(rec.Count("update "), 0u);
  clock.Advance(seconds(29));
  clock.Advance(seconds(1));
  ASSERT_TRUE(Eventually([&] { return rec.Count("update ") == 2; }));
  EXPECT_TRUE(rec.Has("update ns/a 1->1"));
  EXPECT_TRUE(rec.Has("update ns/b 1->1"));
  clock.Advance(seconds(30));
  ASSERT_TRUE(Eventually([&] { return rec.Count("update ") == 4; }));
}

TEST(InformerTest, LateHandlerGetsTheCacheAsAdds) {
  FakeClient client;
  for (const char* n : {"a", "b"}) ASSERT_TRUE(client.Create(kCm, "ns", Cm(n, "1")).ok());
  Informer inf(client, kCm, "ns", {}, FastOptions());
  std::jthread run([&](const std::stop_token& st) { inf.Run(st); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  Recorder rec;
  inf.AddEventHandler(rec.Handler());
  EXPECT_EQ(rec.events(), (std::vector<std::string>{"add ns/a", "add ns/b"}));
}

TEST(InformerTest, ListFailureIsRetriedAndStopEndsRun) {
  FakeClient client;
  ASSERT_TRUE(client.Create(kCm, "ns", Cm("a", "1")).ok());
  std::atomic<int> failures{2};
  client.SetReactor([&](const FakeAction& a) {
    if (a.verb == "list" && failures.fetch_sub(1) > 0) return UnavailableError("refused");
    return OkStatus();
  });
  std::atomic<int> reported{0};
  InformerOptions o = FastOptions();
  o.on_error = [&](const Status&) { ++reported; };
  Informer inf(client, kCm, "ns", {}, o);
  std::stop_source stop;
  std::jthread run([&] { inf.Run(stop.get_token()); });
  ASSERT_TRUE(inf.WaitForSync({}, seconds(10)));
  EXPECT_EQ(reported, 2);
  ASSERT_TRUE(client.WaitForOpenWatches(1));
  stop.request_stop();
  run.join();  // Run returned
  EXPECT_EQ(client.OpenWatches(), 0);
}

}  // namespace
}  // namespace kc::kube
