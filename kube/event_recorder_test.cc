#include "kube/event_recorder.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "kube/testing/fake_client.h"
#include "kube/testing/fake_clock.h"

namespace kc::kube {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

struct Fixture {
  FakeClient client;
  FakeClock clock;
  std::vector<Status> errors;
  EventRecorder recorder{client, Options()};

  EventRecorderOptions Options() {
    EventRecorderOptions o;
    o.component = "kernelcache-operator";
    o.host = "node-1";
    o.aggregation_window = minutes(10);
    o.clock = &clock;
    o.on_error = [this](const Status& s) { errors.push_back(s); };
    return o;
  }
  std::vector<Json> Events(const std::string& ns) {
    auto l = client.List(resources::kEvents, ns, {});
    EXPECT_TRUE(l.ok());
    return l.ok() ? l->items : std::vector<Json>{};
  }
  int Count(const std::string& verb) {
    int n = 0;
    for (const auto& a : client.Actions()) n += a.verb == verb && a.resource == "events";
    return n;
  }
};

ObjectReference Pod(const std::string& name = "llama-0") {
  return ReferenceTo({{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata",
                       {{"name", name},
                        {"namespace", "models"},
                        {"uid", "uid-" + name},
                        {"resourceVersion", "7"}}}});
}

TEST(EventRecorderTest, CreatesAnEventInTheObjectsNamespace) {
  Fixture f;
  f.recorder.Event(Pod(), EventType::kWarning, "CacheMissing", "no cache for fingerprint abc");
  auto events = f.Events("models");
  ASSERT_EQ(events.size(), 1u);
  const Json& e = events[0];
  EXPECT_EQ(e["reason"], "CacheMissing");
  EXPECT_EQ(e["message"], "no cache for fingerprint abc");
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(e["involvedObject"]["kind"], "Pod");
  EXPECT_EQ(e["involvedObject"]["name"], "llama-0");
  EXPECT_EQ(e["involvedObject"]["uid"], "uid-llama-0");
  EXPECT_EQ(e["source"]["component"], "kernelcache-operator");
  EXPECT_EQ(e["source"]["host"], "node-1");
  EXPECT_EQ(e["reportingComponent"], "kernelcache-operator");
  EXPECT_EQ(e["reportingInstance"], "node-1");
  EXPECT_EQ(e["firstTimestamp"], e["lastTimestamp"]);
  EXPECT_EQ(e["metadata"]["name"].get<std::string>().rfind("llama-0.", 0), 0u);
  EXPECT_TRUE(f.errors.empty());
}

TEST(EventRecorderTest, RepeatsWithinTheWindowArePatchedNotCreated) {
  Fixture f;
  f.recorder.Event(Pod(), EventType::kNormal, "Waiting", "cache warming");
  f.clock.Advance(seconds(30));
  f.recorder.Event(Pod(), EventType::kNormal, "Waiting", "cache warming");
  f.clock.Advance(seconds(30));
  f.recorder.Eventf(Pod(), EventType::kNormal, "Waiting", "cache %s", "warming");
  auto events = f.Events("models");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 3);
  EXPECT_NE(events[0]["lastTimestamp"], events[0]["firstTimestamp"]);
  EXPECT_EQ(f.Count("create"), 1);
  EXPECT_EQ(f.Count("patch"), 2);
}

TEST(EventRecorderTest, DifferentMessageTypeOrObjectIsANewEvent) {
  Fixture f;
  f.recorder.Event(Pod(), EventType::kNormal, "Waiting", "a");
  f.recorder.Event(Pod(), EventType::kNormal, "Waiting", "b");
  f.recorder.Event(Pod(), EventType::kWarning, "Waiting", "a");
  f.recorder.Event(Pod("llama-1"), EventType::kNormal, "Waiting", "a");
  EXPECT_EQ(f.Count("create"), 4);
  EXPECT_EQ(f.Count("patch"), 0);
  EXPECT_EQ(f.Events("models").size(), 4u);  // distinct names even at the same instant
  EXPECT_TRUE(f.errors.empty());
}

TEST(EventRecorderTest, TheLeastRecentlySeenEventIsForgottenPastCacheSize) {
  FakeClient client;
  FakeClock clock;
  EventRecorderOptions o;
  o.clock = &clock;
  o.cache_size = 2;
  EventRecorder recorder(client, o);
  auto count = [&](const std::string& verb) {
    int n = 0;
    for (const auto& a : client.Actions()) n += a.verb == verb && a.resource == "events";
    return n;
  };
  recorder.Event(Pod(), EventType::kNormal, "Waiting", "a");
  recorder.Event(Pod(), EventType::kNormal, "Waiting", "b");
  recorder.Event(Pod(), EventType::kNormal, "Waiting", "a");  // patched: a is now most recent
  recorder.Event(Pod(), EventType::kNormal, "Waiting", "c");  // forgets b
  EXPECT_EQ(count("create"), 3);
  EXPECT_EQ(count("patch"), 1);
  recorder.Event(Pod(), EventType::kNormal, "Waiting", "a");  // still remembered
  EXPECT_EQ(count("patch"), 2);
  recorder.Event(Pod(), EventType::kNormal, "Waiting", "b");  // forgotten: a new Event
  EXPECT_EQ(count("create"), 4);
}

TEST(EventRecorderTest, AfterTheWindowARepeatStartsANewEvent) {
  Fixture f;
  f.recorder.Event(Pod(), EventType::kNormal, "Waiting", "x");
  f.clock.Advance(minutes(11));
  f.recorder.Event(Pod(), EventType::kNormal, "Waiting", "x");
  EXPECT_EQ(f.Count("create"), 2);
  EXPECT_EQ(f.Events("models").size(), 2u);
}

TEST(EventRecorderTest, ClusterScopedObjectsGetEventsInDefault) {
  Fixture f;
  ObjectReference node = ReferenceTo(
      {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu-7"}, {"uid", "n"}}}});
  f.recorder.Event(node, EventType::kNormal, "FingerprintChanged", "driver upgraded");
  auto events = f.Events("default");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0]["involvedObject"].contains("namespace"));
}

TEST(EventRecorderTest, ADeletedEventIsRecreated) {
  Fixture f;
  f.recorder.Event(Pod(), EventType::kNormal, "Waiting", "x");
  auto events = f.Events("models");
  ASSERT_EQ(events.size(), 1u);
  ASSERT_TRUE(
      f.client
          .Delete(resources::kEvents, "models", events[0]["metadata"]["name"].get<std::string>())
          .ok());
  f.clock.Advance(seconds(1));
  f.recorder.Event(Pod(), EventType::kNormal, "Waiting", "x");
  events = f.Events("models");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 1);
  EXPECT_TRUE(f.errors.empty());
}

TEST(EventRecorderTest, FailuresAreReportedOnceAndNeverThrown) {
  Fixture f;
  bool fail = true;
  f.client.SetReactor([&](const FakeAction& a) {
    return fail && a.resource == "events" ? UnavailableError("apiserver down") : OkStatus();
  });
  f.recorder.Event(Pod(), EventType::kWarning, "Failed", "x");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.errors[0].code(), StatusCode::kUnavailable);
  EXPECT_NE(f.errors[0].message().find("Failed"), std::string::npos);
  fail = false;
  f.recorder.Event(Pod(), EventType::kWarning, "Failed", "x");  // not aggregated with a failure
  EXPECT_EQ(f.Events("models").size(), 1u);
  EXPECT_EQ(f.errors.size(), 1u);
}

TEST(EventRecorderTest, LongMessagesAreTruncated) {
  Fixture f;
  f.recorder.Event(Pod(), EventType::kNormal, "Long", std::string(5000, 'm'));
  auto events = f.Events("models");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["message"].get<std::string>().size(), 1024u);
}

}  // namespace
}  // namespace kc::kube

namespace kc::kube {
namespace {

// Asynchronous mode: the caller never waits on the API; a writer thread
// writes in order with the same aggregation.
struct AsyncFixture {
  FakeClient client;
  FakeClock clock;
  std::mutex mu;
  std::vector<Status> errors;
  std::unique_ptr<EventRecorder> recorder;

  explicit AsyncFixture(size_t queue) {
    EventRecorderOptions o;
    o.component = "kernelcache-operator";
    o.clock = &clock;
    o.queue = queue;
    o.on_error = [this](const Status& s) {
      std::lock_guard<std::mutex> l(mu);
      errors.push_back(s);
    };
    recorder = std::make_unique<EventRecorder>(client, o);
  }
  int Count(const std::string& verb) {
    int n = 0;
    for (const auto& a : client.Actions()) n += a.verb == verb && a.resource == "events";
    return n;
  }
};

// Holds every events write until Release().
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  void Wait() {
    std::unique_lock<std::mutex> l(mu);
    ++waiting;
    cv.notify_all();
    cv.wait(l, [&] { return open; });
  }
  void AwaitWriter() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return waiting > 0; });
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu);
    open = true;
    cv.notify_all();
  }
};

// Every events write of `client` waits at `gate`.
void HoldEventWrites(FakeClient& client, Gate& gate) {
  client.SetReactor([&gate](const FakeAction& a) {
    if (a.resource == "events") gate.Wait();
    return OkStatus();
  });
}

TEST(EventRecorderAsyncTest, EventReturnsWhileTheWriteIsHeldAndFlushWritesInOrder) {
  AsyncFixture f(16);
  Gate gate;
  HoldEventWrites(f.client, gate);
  f.recorder->Event(Pod("a"), EventType::kNormal, "WarmupStarted", "1");
  gate.AwaitWriter();  // the writer holds "a"; Event() has returned
  f.recorder->Event(Pod("b"), EventType::kNormal, "WarmupStarted", "2");
  f.recorder->Event(Pod("a"), EventType::kNormal, "WarmupStarted", "1");  // a repeat
  // (Synchronous, the first Event() would still be waiting on the gate.)
  gate.Release();
  f.recorder->Flush();
  EXPECT_EQ(f.Count("create"), 2);
  EXPECT_EQ(f.Count("patch"), 1);  // the repeat aggregated, after its create
  auto l = f.client.List(resources::kEvents, "models", {});
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->items.size(), 2u);
  for (const Json& e : l->items) {
    EXPECT_EQ(e["count"], e["involvedObject"]["name"] == "a" ? 2 : 1) << e.dump();
  }
  EXPECT_TRUE(f.errors.empty());
}

TEST(EventRecorderAsyncTest, AFullQueueDropsAndReportsTheEvent) {
  AsyncFixture f(1);
  Gate gate;
  HoldEventWrites(f.client, gate);
  f.recorder->Event(Pod("a"), EventType::kNormal, "R", "1");  // being written
  gate.AwaitWriter();
  f.recorder->Event(Pod("b"), EventType::kNormal, "R", "2");  // queued
  f.recorder->Event(Pod("c"), EventType::kNormal, "R", "3");  // dropped
  {
    std::lock_guard<std::mutex> l(f.mu);
    ASSERT_EQ(f.errors.size(), 1u);
    EXPECT_EQ(f.errors[0].code(), StatusCode::kResourceExhausted);
    EXPECT_NE(f.errors[0].message().find("Pod models/c"), std::string::npos) << f.errors[0];
  }
  gate.Release();
  f.recorder->Flush();
  EXPECT_EQ(f.Count("create"), 2);
}

TEST(EventRecorderAsyncTest, StopDropsWhatIsQueued) {
  AsyncFixture f(16);
  Gate gate;
  HoldEventWrites(f.client, gate);
  f.recorder->Event(Pod("a"), EventType::kNormal, "R", "1");
  gate.AwaitWriter();
  f.recorder->Event(Pod("b"), EventType::kNormal, "R", "2");
  ASSERT_EQ(f.recorder->Queued(), 1u);
  // Released once Stop() has dropped the queue ("b"): the writer then ends "a".
  std::thread release([&] {
    while (f.recorder->Queued() != 0) std::this_thread::yield();
    gate.Release();
  });
  f.recorder->Stop();
  release.join();
  f.recorder->Flush();  // returns at once once stopped
  EXPECT_EQ(f.Count("create"), 1);
  f.recorder->Event(Pod("c"), EventType::kNormal, "R", "3");  // after Stop: written inline
  EXPECT_EQ(f.Count("create"), 2);
}

}  // namespace
}  // namespace kc::kube
