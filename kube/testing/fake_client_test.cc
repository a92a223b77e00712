#include "kube/testing/fake_client.h"

#include <gtest/gtest.h>

#include <functional>
#include <thread>

namespace kc::kube {
namespace {

const Resource& kCm = resources::kConfigMaps;
// A custom resource: it has a status subresource, as KernelCache does.
const Resource kWidgets{"test.kernelcache.io", "v1", "widgets", "Widget", true};

Json Widget(const std::string& name) {
  return {{"metadata", {{"name", name}}}, {"spec", {{"size", 1}}}, {"status", {{"phase", "Old"}}}};
}

Json Cm(const std::string& name, const Json& labels = Json::object()) {
  return {{"metadata", {{"name", name}, {"labels", labels}}}, {"data", {{"k", "v"}}}};
}

TEST(MatchesLabelSelectorTest, Table) {
  const Json labels = {{"app", "llama"}, {"tier", "web"}};
  struct Case {
    std::string selector;
    bool want;
  };
  const std::vector<Case> cases = {
      {"", true},
      {"app=llama", true},
      {"app==llama", true},
      {"app=other", false},
      {"app!=other", true},
      {"app!=llama", false},
      {"missing!=x", true},
      {"app", true},
      {"missing", false},
      {"!missing", true},
      {"!app", false},
      {"app=llama,tier=web", true},
      {"app=llama,tier=db", false},
      {"tier in (web, db)", true},
      {"tier in (db)", false},
      {"tier notin (db)", true},
      {"tier notin (web,db)", false},
      {"missing notin (x)", true},
  };
  for (const auto& c : cases) {
    auto got = MatchesLabelSelector(c.selector, labels);
    ASSERT_TRUE(got.ok()) << c.selector;
    EXPECT_EQ(*got, c.want) << c.selector;
  }
}

TEST(FakeClientTest, CrudWithResourceVersionsAndConflicts) {
  FakeClient c;
  auto created = c.Create(kCm, "ns", Cm("a"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ((*created)["kind"], "ConfigMap");
  EXPECT_EQ((*created)["metadata"]["namespace"], "ns");
  EXPECT_FALSE((*created)["metadata"]["uid"].get<std::string>().empty());
  EXPECT_TRUE(IsAlreadyExists(c.Create(kCm, "ns", Cm("a")).status()));

  Json stale = *created;
  Json upd = *created;
  upd["data"]["k"] = "v2";
  auto updated = c.Update(kCm, "ns", upd);
  ASSERT_TRUE(updated.ok());
  EXPECT_NE((*updated)["metadata"]["resourceVersion"], (*created)["metadata"]["resourceVersion"]);
  EXPECT_TRUE(IsConflict(c.Update(kCm, "ns", stale).status()));

  auto patched = c.Patch(kCm, "ns", "a", PatchType::kMerge, {{"data", {{"x", "y"}}}});
  ASSERT_TRUE(patched.ok());
  EXPECT_EQ((*patched)["data"]["k"], "v2");
  EXPECT_EQ((*patched)["data"]["x"], "y");

  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "nope";
  EXPECT_TRUE(IsConflict(c.Delete(kCm, "ns", "a", wrong_uid)));
  EXPECT_TRUE(c.Delete(kCm, "ns", "a").ok());
  EXPECT_TRUE(IsNotFound(c.Get(kCm, "ns", "a").status()));
  EXPECT_TRUE(IsNotFound(c.Delete(kCm, "ns", "a")));
}

TEST(FakeClientTest, ListPagesAndSelects) {
  FakeClient c;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        c.Create(kCm, "ns", Cm("o" + std::to_string(i), {{"n", std::to_string(i % 2)}})).ok());
  }
  ASSERT_TRUE(c.Create(kCm, "other", Cm("x")).ok());
  ListOptions o;
  o.limit = 2;
  std::vector<std::string> names;
  do {
    auto page = c.List(kCm, "ns", o);
    ASSERT_TRUE(page.ok());
    for (const auto& item : page->items) names.push_back(item["metadata"]["name"]);
    o.continue_token = page->continue_token;
  } while (!o.continue_token.empty());
  EXPECT_EQ(names, (std::vector<std::string>{"o0", "o1", "o2", "o3", "o4"}));
  auto all = c.List(kCm, "", {});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 6u);
  ListOptions sel;
  sel.label_selector = "n=1";
  EXPECT_EQ(c.List(kCm, "ns", sel)->items.size(), 2u);
}

TEST(FakeClientTest, WatchReplaysFromResourceVersionAndStops) {
  FakeClient c;
  ASSERT_TRUE(c.Create(kCm, "ns", Cm("a")).ok());
  const std::string rv = std::to_string(c.resource_version());
  ASSERT_TRUE(c.Create(kCm, "ns", Cm("b")).ok());
  ASSERT_TRUE(c.Delete(kCm, "ns", "a").ok());
  std::vector<std::pair<WatchEvent::Type, std::string>> seen;
  WatchOptions o;
  o.resource_version = rv;
  Status s = c.Watch(kCm, "ns", o, {}, [&](const WatchEvent& e) {
    seen.emplace_back(e.type, e.object["metadata"]["name"]);
    return seen.size() < 2;
  });
  EXPECT_TRUE(s.ok());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::make_pair(WatchEvent::Type::kAdded, std::string("b")));
  EXPECT_EQ(seen[1], std::make_pair(WatchEvent::Type::kDeleted, std::string("a")));
}

TEST(FakeClientTest, WatchFaultsAndGone) {
  FakeClient c;
  ASSERT_TRUE(c.Create(kCm, "ns", Cm("a")).ok());
  const std::string old_rv = std::to_string(c.resource_version());
  ASSERT_TRUE(c.Create(kCm, "ns", Cm("b")).ok());
  c.Compact();
  WatchOptions o;
  o.resource_version = old_rv;
  EXPECT_TRUE(IsGone(c.Watch(kCm, "ns", o, {}, [](const WatchEvent&) { return true; })));

  c.FailNextWatches(1, UnavailableError("refused"));
  o.resource_version = std::to_string(c.resource_version());
  EXPECT_EQ(c.Watch(kCm, "ns", o, {}, [](const WatchEvent&) { return true; }).code(),
            StatusCode::kUnavailable);

  // An open watch: events, a bookmark, then a dropped connection.
  std::vector<WatchEvent> seen;
  Status result;
  std::jthread watcher([&] {
    result = c.Watch(kCm, "ns", o, {}, [&](const WatchEvent& e) {
      seen.push_back(e);
      return true;
    });
  });
  ASSERT_TRUE(c.WaitForOpenWatches(1));
  ASSERT_TRUE(c.Create(kCm, "ns", Cm("c")).ok());
  c.SendBookmark();
  c.DisconnectWatches();
  watcher.join();
  EXPECT_EQ(result.code(), StatusCode::kUnavailable);
  ASSERT_GE(seen.size(), 1u);
  EXPECT_EQ(seen[0].object["metadata"]["name"], "c");

  // Stop ends a watch with Cancelled.
  std::stop_source stop;
  std::jthread stopped([&] {
    result = c.Watch(kCm, "ns", o, stop.get_token(), [](const WatchEvent&) { return true; });
  });
  ASSERT_TRUE(c.WaitForOpenWatches(1));
  stop.request_stop();
  stopped.join();
  EXPECT_EQ(result.code(), StatusCode::kCancelled);
}

TEST(FakeClientTest, LabelChangeMovesObjectInAndOutOfASelectedWatch) {
  FakeClient c;
  auto obj = c.Create(kCm, "ns", Cm("a", {{"app", "x"}}));
  ASSERT_TRUE(obj.ok());
  WatchOptions o;
  o.label_selector = "app=x";
  o.resource_version = std::to_string(c.resource_version());
  std::vector<WatchEvent::Type> types;
  std::jthread watcher([&] {
    (void)c.Watch(kCm, "ns", o, {}, [&](const WatchEvent& e) {
      types.push_back(e.type);
      return types.size() < 2;
    });
  });
  ASSERT_TRUE(c.WaitForOpenWatches(1));
  ASSERT_TRUE(
      c.Patch(kCm, "ns", "a", PatchType::kMerge, {{"metadata", {{"labels", {{"app", "y"}}}}}})
          .ok());
  ASSERT_TRUE(
      c.Patch(kCm, "ns", "a", PatchType::kMerge, {{"metadata", {{"labels", {{"app", "x"}}}}}})
          .ok());
  watcher.join();
  EXPECT_EQ(types,
            (std::vector<WatchEvent::Type>{WatchEvent::Type::kDeleted, WatchEvent::Type::kAdded}));
}

TEST(FakeClientTest, ReactorFailsAVerbAndActionsAreRecorded) {
  FakeClient c;
  c.SetReactor([](const FakeAction& a) {
    return a.verb == "create" && a.name == "bad" ? UnavailableError("injected") : OkStatus();
  });
  EXPECT_EQ(c.Create(kCm, "ns", Cm("bad")).status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(c.Create(kCm, "ns", Cm("good")).ok());
  auto actions = c.Actions();
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[1].verb, "create");
  EXPECT_EQ(actions[1].name, "good");
}

// Each write endpoint changes what the API server lets it change: with a
// status subresource, the main resource ignores status and the status
// subresource ignores everything else; generation follows what is neither
// metadata nor (with the subresource) status.
TEST(FakeClientTest, WritesHonourTheStatusSubresource) {
  using Write = std::function<StatusOr<Json>(FakeClient&, const Resource&, Json)>;
  auto update = [](FakeClient& c, const Resource& r, Json o) { return c.Update(r, "ns", o); };
  auto update_status = [](FakeClient& c, const Resource& r, Json o) {
    return c.UpdateStatus(r, "ns", o);
  };
  auto merge = [](const Json& patch, const std::string& subresource = "") -> Write {
    return [patch, subresource](FakeClient& c, const Resource& r, const Json&) {
      PatchOptions o;
      o.subresource = subresource;
      return c.Patch(r, "ns", "w", PatchType::kMerge, patch, o);
    };
  };
  auto json_patch = [](const Json& ops, const std::string& subresource = "") -> Write {
    return [ops, subresource](FakeClient& c, const Resource& r, const Json&) {
      PatchOptions o;
      o.subresource = subresource;
      return c.Patch(r, "ns", "w", PatchType::kJsonPatch, ops, o);
    };
  };
  struct Case {
    std::string name;
    const Resource* resource;
    Write write;
    bool edit_spec = false;    // for update/update_status: the object sent has spec.size 2
    bool edit_status = false;  // ...and status.phase New
    int want_size;
    std::string want_phase;
    int64_t want_generation;
  };
  const std::vector<Case> cases = {
      {"update: spec and status", &kWidgets, update, true, true, 2, "Old", 2},
      {"update: status only", &kWidgets, update, false, true, 1, "Old", 1},
      {"update_status: spec and status", &kWidgets, update_status, true, true, 1, "New", 1},
      {"merge patch: spec and status", &kWidgets,
       merge({{"spec", {{"size", 2}}}, {"status", {{"phase", "New"}}}}), false, false, 2, "Old", 2},
      {"merge patch: labels", &kWidgets, merge({{"metadata", {{"labels", {{"a", "b"}}}}}}), false,
       false, 1, "Old", 1},
      {"json patch: status", &kWidgets,
       json_patch({{{"op", "replace"}, {"path", "/status/phase"}, {"value", "New"}}}), false, false,
       1, "Old", 1},
      {"status merge patch: spec and status", &kWidgets,
       merge({{"spec", {{"size", 2}}}, {"status", {{"phase", "New"}}}}, "status"), false, false, 1,
       "New", 1},
      {"status json patch: spec and status", &kWidgets,
       json_patch({{{"op", "replace"}, {"path", "/spec/size"}, {"value", 2}},
                   {{"op", "replace"}, {"path", "/status/phase"}, {"value", "New"}}},
                  "status"),
       false, false, 1, "New", 1},
      // Without a status subresource status is written with the object and
      // counts for generation.
      {"no subresource: update status", &kCm, update, false, true, 1, "New", 2},
      {"no subresource: merge patch", &kCm, merge({{"status", {{"phase", "New"}}}}), false, false,
       1, "New", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeClient fake;
    auto created = fake.Create(*c.resource, "ns", Widget("w"));
    ASSERT_TRUE(created.ok()) << created.status();
    Json sent = *created;
    if (c.edit_spec) sent["spec"]["size"] = 2;
    if (c.edit_status) sent["status"]["phase"] = "New";
    auto written = c.write(fake, *c.resource, sent);
    ASSERT_TRUE(written.ok()) << written.status();
    auto got = fake.Get(*c.resource, "ns", "w");
    ASSERT_TRUE(got.ok());
    EXPECT_EQ(*got, *written);
    EXPECT_EQ((*got)["spec"]["size"], c.want_size);
    EXPECT_EQ((*got)["status"]["phase"], c.want_phase);
    EXPECT_EQ((*got)["metadata"]["generation"], c.want_generation);
  }
}

TEST(FakeClientTest, StatusWritesWithoutAStatusSubresourceAreNotFound) {
  FakeClient c;
  ASSERT_TRUE(c.Create(kCm, "ns", Cm("a")).ok());
  EXPECT_TRUE(IsNotFound(c.UpdateStatus(kCm, "ns", Cm("a")).status()));
  PatchOptions o;
  o.subresource = "status";
  EXPECT_TRUE(IsNotFound(
      c.Patch(kCm, "ns", "a", PatchType::kMerge, {{"status", Json::object()}}, o).status()));
  // A custom resource declared without one writes status with the object.
  c.SetStatusSubresource(kWidgets, false);
  auto w = c.Create(kWidgets, "ns", Widget("w"));
  ASSERT_TRUE(w.ok());
  (*w)["status"]["phase"] = "New";
  auto updated = c.Update(kWidgets, "ns", *w);
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ((*updated)["status"]["phase"], "New");
  EXPECT_TRUE(IsNotFound(c.UpdateStatus(kWidgets, "ns", *w).status()));
}

// Delete of an object with finalizers marks it; it goes when the last
// finalizer is removed. Watchers see MODIFIED, then DELETED.
TEST(FakeClientTest, FinalizersHoldADeletedObjectUntilRemoved) {
  FakeClient c;
  Json w = Widget("w");
  w["metadata"]["finalizers"] = {"test/a", "test/b"};
  ASSERT_TRUE(c.Create(kWidgets, "ns", w).ok());
  WatchOptions o;
  o.resource_version = std::to_string(c.resource_version());

  ASSERT_TRUE(c.Delete(kWidgets, "ns", "w").ok());
  auto marked = c.Get(kWidgets, "ns", "w");
  ASSERT_TRUE(marked.ok()) << "finalizers keep the object";
  ASSERT_TRUE((*marked)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*marked)["metadata"]["generation"], 2);
  const int64_t rv = c.resource_version();
  ASSERT_TRUE(c.Delete(kWidgets, "ns", "w").ok()) << "deleting again is a no-op";
  EXPECT_EQ(c.resource_version(), rv);

  // No finalizer can be added now, and deletionTimestamp cannot be unset.
  EXPECT_EQ(c.Patch(kWidgets, "ns", "w", PatchType::kMerge,
                    {{"metadata", {{"finalizers", {"test/a", "test/b", "test/c"}}}}})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  Json unmark = *marked;
  unmark["metadata"].erase("deletionTimestamp");
  unmark["metadata"]["finalizers"] = {"test/b"};
  auto one_left = c.Update(kWidgets, "ns", unmark);
  ASSERT_TRUE(one_left.ok()) << one_left.status();
  EXPECT_EQ((*one_left)["metadata"]["deletionTimestamp"],
            (*marked)["metadata"]["deletionTimestamp"]);
  ASSERT_TRUE(c.Get(kWidgets, "ns", "w").ok());

  // Removing the last finalizer deletes it.
  auto gone =
      c.Patch(kWidgets, "ns", "w", PatchType::kMerge, {{"metadata", {{"finalizers", nullptr}}}});
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_TRUE(IsNotFound(c.Get(kWidgets, "ns", "w").status()));

  std::vector<WatchEvent::Type> types;
  ASSERT_TRUE(c.Watch(kWidgets, "ns", o, {}, [&](const WatchEvent& e) {
                 types.push_back(e.type);
                 return types.size() < 3;
               }).ok());
  EXPECT_EQ(types,
            (std::vector<WatchEvent::Type>{WatchEvent::Type::kModified, WatchEvent::Type::kModified,
                                           WatchEvent::Type::kDeleted}));

  // Without finalizers Delete removes at once.
  ASSERT_TRUE(c.Create(kWidgets, "ns", Widget("plain")).ok());
  ASSERT_TRUE(c.Delete(kWidgets, "ns", "plain").ok());
  EXPECT_TRUE(IsNotFound(c.Get(kWidgets, "ns", "plain").status()));
}

}  // namespace
}  // namespace kc::kube
