// Two leader-election candidates against the real API server: exactly one
// leads; when the leader dies without releasing, the other takes over within
// the lease duration (plus a retry period); a graceful release hands over
// without waiting for the lease to expire.
#include "kube/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <thread>
#include <utility>

#include "tests/kube/kube_test_util.h"

namespace kc::kube {
namespace {

using testing::ClusterClient;
using testing::UniqueName;

static auto* const kEnv = ::testing::AddGlobalTestEnvironment(new LocalClusterEnvironment());

constexpr char kNs[] = "kube-leader-test";
constexpr auto kLease = std::chrono::seconds(3);
constexpr auto kRenewDeadline = std::chrono::seconds(2);
constexpr auto kRetry = std::chrono::milliseconds(500);
// Slack for API latency on a loaded two-core machine.
constexpr auto kSlack = std::chrono::milliseconds(2500);
// A lease no test outlives: a candidate that leads under it was handed the
// lease (released), since it cannot have waited for it to expire.
constexpr auto kEndlessLease = std::chrono::hours(1);

// How many candidates run their leader work right now, and the most ever.
struct Leadership {
  std::atomic<int> now{0};
  std::atomic<int> max{0};
};

class Candidate {
 public:
  Candidate(const std::string& lease, const std::string& identity, bool release,
            Leadership* leadership, std::chrono::seconds lease_duration = kLease)
      : identity_(identity) {
    client_ = ClusterClient();
    LeaderElectionConfig c;
    c.lease_namespace = kNs;
    c.lease_name = lease;
    c.identity = identity;
    c.lease_duration = lease_duration;
    c.renew_deadline = kRenewDeadline;
    c.retry_period = kRetry;
    c.release_on_cancel = release;
    c.callbacks.on_started_leading = [this, leadership](std::stop_token token) {
      const int n = ++leadership->now;
      int m = leadership->max.load();
      while (n > m && !leadership->max.compare_exchange_weak(m, n)) {
      }
      started_at_ = std::chrono::steady_clock::now();
      leading_ = true;
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, std::move(token), [] { return false; });
      --leadership->now;
    };
    auto e = LeaderElector::Create(*client_, c);
    EXPECT_TRUE(e.ok()) << e.status();
    if (e.ok()) elector_ = std::move(e).value();
  }
  ~Candidate() { Stop(); }

  void Start() {
    thread_ = std::jthread([this] { elector_->Run(stop_.get_token()); });
  }
  // Stops the candidate; without release this is a crash as far as the lease
  // is concerned (no more renewals, the lease stays held).
  void Stop() {
    stop_.request_stop();
    if (thread_.joinable()) thread_.join();
  }
  bool leading() const { return leading_.load() && elector_->IsLeader(); }
  std::chrono::steady_clock::time_point started_at() const { return started_at_; }
  const std::string& identity() const { return identity_; }
  bool ok() const { return client_ != nullptr && elector_ != nullptr; }

 private:
  std::string identity_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<LeaderElector> elector_;
  std::stop_source stop_;
  std::jthread thread_;
  std::atomic<bool> leading_{false};
  std::chrono::steady_clock::time_point started_at_;
};

class LeaderElectionTest : public testing::ClusterTest<kNs> {
 protected:
  LeaseRecord Lease(const std::string& name) {
    auto l = client_->Get(resources::kLeases, kNs, name);
    EXPECT_TRUE(l.ok()) << l.status();
    return l.ok() ? LeaseRecordFromJson(*l) : LeaseRecord{};
  }
};

TEST_F(LeaderElectionTest, ExactlyOneLeadsAndTheOtherTakesOverWhenTheLeaderDies) {
  const std::string lease = UniqueName("lease");
  Leadership leadership;
  auto a = std::make_unique<Candidate>(lease, "candidate-a", /*release=*/false, &leadership);
  auto b = std::make_unique<Candidate>(lease, "candidate-b", /*release=*/false, &leadership);
  ASSERT_TRUE(a->ok() && b->ok());
  a->Start();
  b->Start();
  ASSERT_TRUE(
      testing::Eventually([&] { return a->leading() || b->leading(); }, std::chrono::seconds(30)));
  // Several lease periods pass; exactly one leads throughout.
  const auto observe_until = std::chrono::steady_clock::now() + 2 * kLease;
  while (std::chrono::steady_clock::now() < observe_until) {
    ASSERT_NE(a->leading(), b->leading());
    ASSERT_LE(leadership.max.load(), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Candidate* leader = a->leading() ? a.get() : b.get();
  Candidate* follower = a->leading() ? b.get() : a.get();
  EXPECT_EQ(Lease(lease).holder, leader->identity());
  const int64_t transitions = Lease(lease).lease_transitions;

  // Kill the leader: it stops renewing and does not release.
  const auto killed_at = std::chrono::steady_clock::now();
  leader->Stop();
  EXPECT_EQ(Lease(lease).holder, leader->identity());
  ASSERT_TRUE(testing::Eventually([&] { return follower->leading(); }, std::chrono::seconds(30)));
  const auto took = follower->started_at() - killed_at;
  std::cout << "takeover after kill: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n";
  EXPECT_LE(took, kLease + kRetry + kSlack)
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  const LeaseRecord after = Lease(lease);
  EXPECT_EQ(after.holder, follower->identity());
  EXPECT_EQ(after.lease_transitions, transitions + 1);
  EXPECT_LE(leadership.max.load(), 1);
}

// Under a lease of an hour, b can lead only if a's release handed the lease
// over: no elapsed-time bound, so a slow machine cannot fail it (only a
// release that does not work can, by b never leading).
TEST_F(LeaderElectionTest, GracefulReleaseHandsOverWithoutWaitingForTheLease) {
  const std::string lease = UniqueName("lease");
  Leadership leadership;
  auto a = std::make_unique<Candidate>(lease, "candidate-a", /*release=*/true, &leadership,
                                       kEndlessLease);
  ASSERT_TRUE(a->ok());
  a->Start();
  ASSERT_TRUE(testing::Eventually([&] { return a->leading(); }, std::chrono::seconds(30)));
  auto b = std::make_unique<Candidate>(lease, "candidate-b", /*release=*/true, &leadership,
                                       kEndlessLease);
  ASSERT_TRUE(b->ok());
  b->Start();
  // b is running and sees a holding the lease.
  const auto observe_until = std::chrono::steady_clock::now() + 2 * kRetry;
  while (std::chrono::steady_clock::now() < observe_until) {
    ASSERT_FALSE(b->leading());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  const int64_t transitions = Lease(lease).lease_transitions;
  const auto released_at = std::chrono::steady_clock::now();
  a->Stop();
  const LeaseRecord released = Lease(lease);
  EXPECT_TRUE(released.holder.empty() || released.holder == "candidate-b") << released.holder;
  // A hang detector, not a bound: with a working release b leads at its
  // next retry; without one, not within the hour of the lease.
  ASSERT_TRUE(testing::Eventually([&] { return b->leading(); }, std::chrono::minutes(5)));
  const auto took = b->started_at() - released_at;
  std::cout << "hand-over after release: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n";
  const LeaseRecord taken = Lease(lease);
  EXPECT_EQ(taken.holder, "candidate-b");
  EXPECT_EQ(taken.lease_transitions, transitions + 1);
  b->Stop();
  EXPECT_TRUE(Lease(lease).holder.empty());
}

}  // namespace
}  // namespace kc::kube
