// An informer on ConfigMaps converges to the true state of the real API
// server (a) after the API server is killed and restarted mid-watch, and
// (b) after its resume point has been compacted away (410 Gone -> relist),
// including a deletion that happened while it was not watching.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "kube/informer.h"
#include "tests/kube/kube_test_util.h"

namespace kc::kube {
namespace {

using resources::kConfigMaps;
using testing::ClusterClient;
using testing::UniqueName;

static auto* const kEnv = ::testing::AddGlobalTestEnvironment(new LocalClusterEnvironment());

constexpr char kNs[] = "kube-informer-test";
constexpr auto kConverge = std::chrono::seconds(90);

// Forwards every call to the real client; while "partitioned", open watches
// end and new ones fail as if the network between the informer and the API
// server were cut. The API server and every object stay real.
class PartitionableClient final : public Client {
 public:
  explicit PartitionableClient(Client& real) : real_(real) {}

  void Partition() {
    std::lock_guard<std::mutex> l(mu_);
    partitioned_ = true;
    cut_.request_stop();
  }
  void Heal() {
    std::lock_guard<std::mutex> l(mu_);
    partitioned_ = false;
    cut_ = std::stop_source();
  }
  int WatchAttemptsWhilePartitioned() const { return refused_.load(); }

  StatusOr<Json> Get(const Resource& r, const std::string& ns, const std::string& name) override {
    return real_.Get(r, ns, name);
  }
  StatusOr<ListResult> List(const Resource& r, const std::string& ns,
                            const ListOptions& options) override {
    if (IsPartitioned()) return UnavailableError("partitioned");
    return real_.List(r, ns, options);
  }
  StatusOr<Json> Create(const Resource& r, const std::string& ns, const Json& object) override {
    return real_.Create(r, ns, object);
  }
  StatusOr<Json> Update(const Resource& r, const std::string& ns, const Json& object) override {
    return real_.Update(r, ns, object);
  }
  StatusOr<Json> UpdateStatus(const Resource& r, const std::string& ns,
                              const Json& object) override {
    return real_.UpdateStatus(r, ns, object);
  }
  StatusOr<Json> Patch(const Resource& r, const std::string& ns, const std::string& name,
                       PatchType type, const Json& patch, const PatchOptions& options) override {
    return real_.Patch(r, ns, name, type, patch, options);
  }
  Status Delete(const Resource& r, const std::string& ns, const std::string& name,
                const DeleteOptions& options) override {
    return real_.Delete(r, ns, name, options);
  }
  Status Watch(const Resource& r, const std::string& ns, const WatchOptions& options,
               std::stop_token stop,
               const std::function<bool(const WatchEvent&)>& handler) override {
    std::stop_source either;
    std::stop_token cut;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (partitioned_) {
        ++refused_;
        return UnavailableError("partitioned: connection refused");
      }
      cut = cut_.get_token();
    }
    std::stop_callback on_stop(stop, [&] { either.request_stop(); });
    std::stop_callback on_cut(cut, [&] { either.request_stop(); });
    Status s = real_.Watch(r, ns, options, either.get_token(), handler);
    if (cut.stop_requested() && !stop.stop_requested()) {
      return UnavailableError("partitioned: connection reset");
    }
    return s;
  }

 private:
  bool IsPartitioned() {
    std::lock_guard<std::mutex> l(mu_);
    return partitioned_;
  }
  Client& real_;
  std::mutex mu_;
  bool partitioned_ = false;
  std::stop_source cut_;
  std::atomic<int> refused_{0};
};

class Recorder {
 public:
  EventHandler Handler() {
    EventHandler h;
    h.on_add = [this](const Json& o) { Push("add " + Name(o)); };
    h.on_update = [this](const Json&, const Json& o) { Push("update " + Name(o)); };
    h.on_delete = [this](const Json& o, bool unknown) {
      Push("delete " + Name(o) + (unknown ? " unknown" : ""));
    };
    return h;
  }
  bool Has(const std::string& e) const {
    std::lock_guard<std::mutex> l(mu_);
    return std::find(events_.begin(), events_.end(), e) != events_.end();
  }

 private:
  static std::string Name(const Json& o) { return o["metadata"]["name"].get<std::string>(); }
  void Push(std::string e) {
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(std::move(e));
  }
  mutable std::mutex mu_;
  std::vector<std::string> events_;
};

class InformerRestartTest : public testing::ClusterTest<kNs> {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    run_ = UniqueName("inf");
    selector_.label_selector = "run=" + run_;
  }

  Status Put(const std::string& name, const std::string& value) {
    Json cm = {{"metadata", {{"name", run_ + "-" + name}, {"labels", {{"run", run_}}}}},
               {"data", {{"v", value}}}};
    auto created = client_->Create(kConfigMaps, kNs, cm);
    if (created.ok()) return OkStatus();
    if (!IsAlreadyExists(created.status())) return created.status();
    return client_
        ->Patch(kConfigMaps, kNs, run_ + "-" + name, PatchType::kMerge,
                Json{{"data", {{"v", value}}}})
        .status();
  }
  Status Remove(const std::string& name) {
    Status s = client_->Delete(kConfigMaps, kNs, run_ + "-" + name);
    return IsNotFound(s) ? OkStatus() : s;  // a retried delete may find it gone
  }
  // Retries `op` while it fails with Unavailable, for at most 30 s.
  static Status Retrying(const std::function<Status()>& op) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    Status s = op();
    while (s.code() == StatusCode::kUnavailable && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      s = op();
    }
    return s;
  }

  // The cache equals the server's list (names and values).
  static std::map<std::string, std::string> Snapshot(const std::vector<Json>& items) {
    std::map<std::string, std::string> out;
    for (const Json& o : items) {
      out[o["metadata"]["name"].get<std::string>()] =
          o.contains("data") ? o["data"].value("v", "") : "";
    }
    return out;
  }
  std::map<std::string, std::string> Truth() {
    auto list = ListAll(*client_, kConfigMaps, kNs, selector_);
    EXPECT_TRUE(list.ok()) << list.status();
    return list.ok() ? Snapshot(list->items) : std::map<std::string, std::string>{};
  }
  std::map<std::string, std::string> Want(
      const std::vector<std::pair<std::string, std::string>>& kv) {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : kv) out[run_ + "-" + k] = v;
    return out;
  }

  static InformerOptions Options() {
    InformerOptions o;
    o.page_size = 2;  // exercise paging
    o.backoff_base = std::chrono::milliseconds(200);
    o.backoff_max = std::chrono::seconds(2);
    o.on_error = [](const Status& s) { std::cerr << "informer: " << s << "\n"; };
    return o;
  }

  std::string run_;
  ListOptions selector_;
};

TEST_F(InformerRestartTest, ConvergesAfterApiServerRestartMidWatch) {
  for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(Put(n, "1").ok());
  std::unique_ptr<Client> informer_client = ClusterClient();
  ASSERT_NE(informer_client, nullptr);
  Informer informer(*informer_client, kConfigMaps, kNs, selector_, Options());
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  std::jthread run([&](const std::stop_token& st) { informer.Run(st); });
  ASSERT_TRUE(informer.WaitForSync({}, std::chrono::seconds(60)));
  EXPECT_EQ(Snapshot(informer.store().List()), Want({{"a", "1"}, {"b", "1"}, {"c", "1"}}));

  // A change the open watch must deliver, then the API server dies mid-watch.
  ASSERT_TRUE(Put("a", "2").ok());
  ASSERT_TRUE(testing::Eventually(
      [&] { return Snapshot(informer.store().List())[run_ + "-a"] == "2"; }, kConverge));
  LocalCluster* cluster = LocalClusterEnvironment::cluster();
  ASSERT_TRUE(cluster->StopApiServer().ok());
  ASSERT_TRUE(cluster->StartApiServer().ok());

  // Changes right after the restart, while the informer is reconnecting.
  // (The test's own client may hold a pooled connection to the old server
  // process: its first request can fail with Unavailable, so writes retry.)
  ASSERT_TRUE(Retrying([&] { return Put("a", "3"); }).ok());
  ASSERT_TRUE(Retrying([&] { return Remove("b"); }).ok());
  ASSERT_TRUE(Retrying([&] { return Put("d", "1"); }).ok());
  const auto want = Want({{"a", "3"}, {"c", "1"}, {"d", "1"}});
  ASSERT_EQ(Truth(), want);
  ASSERT_TRUE(
      testing::Eventually([&] { return Snapshot(informer.store().List()) == want; }, kConverge))
      << "informer cache never converged; last resourceVersion " << informer.LastResourceVersion();
  EXPECT_TRUE(rec.Has("delete " + run_ + "-b") || rec.Has("delete " + run_ + "-b unknown"));
  EXPECT_TRUE(rec.Has("add " + run_ + "-d"));

  // And it keeps following the watch afterwards.
  ASSERT_TRUE(Put("c", "2").ok());
  ASSERT_TRUE(testing::Eventually(
      [&] { return Snapshot(informer.store().List())[run_ + "-c"] == "2"; }, kConverge));
}

TEST_F(InformerRestartTest, RelistsAfterCompactionWithNoLostFinalState) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Put("k" + std::to_string(i), "1").ok());
  std::unique_ptr<Client> real = ClusterClient();
  ASSERT_NE(real, nullptr);
  PartitionableClient informer_client(*real);
  Informer informer(informer_client, kConfigMaps, kNs, selector_, Options());
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  std::jthread run([&](const std::stop_token& st) { informer.Run(st); });
  ASSERT_TRUE(informer.WaitForSync({}, std::chrono::seconds(60)));
  ASSERT_EQ(informer.ListCount(), 1);
  const std::string resume_rv = informer.LastResourceVersion();

  // Cut the informer off, then change a lot: updates, deletions, creations.
  informer_client.Partition();
  ASSERT_TRUE(
      testing::Eventually([&] { return informer_client.WatchAttemptsWhilePartitioned() > 0; },
                          std::chrono::seconds(30)));
  for (int round = 2; round <= 6; ++round) {
    for (int i = 0; i < 5; ++i)
      ASSERT_TRUE(Put("k" + std::to_string(i), std::to_string(round)).ok());
  }
  ASSERT_TRUE(Remove("k1").ok());
  ASSERT_TRUE(Remove("k3").ok());
  ASSERT_TRUE(Put("new", "1").ok());
  ASSERT_TRUE(Put("k0", "final").ok());

  // Compact etcd and restart the API server so its watch cache starts at the
  // current revision: resuming from `resume_rv` is now 410 Gone.
  LocalCluster* cluster = LocalClusterEnvironment::cluster();
  int64_t compacted_at = 0;
  ASSERT_TRUE(cluster->Compact(&compacted_at).ok());
  EXPECT_GT(compacted_at, std::stoll(resume_rv));
  ASSERT_TRUE(cluster->RestartApiServer().ok());
  WatchOptions probe;
  probe.resource_version = resume_rv;
  probe.timeout_seconds = 5;
  Status gone = real->Watch(kConfigMaps, kNs, probe, {}, [](const WatchEvent&) { return true; });
  ASSERT_TRUE(IsGone(gone)) << "resume point not compacted away: " << gone;

  informer_client.Heal();
  const auto want = Want({{"k0", "final"}, {"k2", "6"}, {"k4", "6"}, {"new", "1"}});
  ASSERT_EQ(Truth(), want);
  ASSERT_TRUE(
      testing::Eventually([&] { return Snapshot(informer.store().List()) == want; }, kConverge))
      << "informer cache never converged";
  EXPECT_GE(informer.ListCount(), 2);  // relisted on 410
  // The deletions it never saw arrive as final-state-unknown deletes.
  EXPECT_TRUE(rec.Has("delete " + run_ + "-k1 unknown"));
  EXPECT_TRUE(rec.Has("delete " + run_ + "-k3 unknown"));
  EXPECT_TRUE(rec.Has("add " + run_ + "-new"));
  EXPECT_TRUE(rec.Has("update " + run_ + "-k0"));

  // The watch continues from the new list's resourceVersion.
  ASSERT_TRUE(Put("k2", "after").ok());
  ASSERT_TRUE(testing::Eventually(
      [&] { return Snapshot(informer.store().List())[run_ + "-k2"] == "after"; }, kConverge));
}

}  // namespace
}  // namespace kc::kube
