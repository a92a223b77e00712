#include "kube/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <thread>
#include <utility>
#include <vector>

#include "kube/testing/fake_client.h"
#include "kube/testing/fake_clock.h"
#include "testing/eventually.h"

namespace kc::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kNs[] = "kube-system";
constexpr char kName[] = "kernelcache-operator";

// Advances the fake clock in `step`s until `pred` holds; returns the fake
// time it took, or nullopt when nothing moves for a minute of real time (a
// hang). Before each step it waits until `waiters()` threads are blocked on
// the clock at the current fake time (or `pred` holds): fake time never
// passes a thread that is still busy, however slowly a loaded machine runs
// it, so what the tests assert is fake time only. `waiters` is asked again
// while waiting, since a thread may leave the clock (a watchdog that fired).
std::optional<Clock::Duration> AdvanceUntil(FakeClock& clock, Clock::Duration step,
                                            const std::function<bool()>& pred,
                                            const std::function<int()>& waiters) {
  const Clock::TimePoint start = clock.Now();
  for (;;) {
    const auto hang = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    for (;;) {
      if (pred()) return clock.Now() - start;
      if (clock.WaitForWaiters(waiters(), milliseconds(5))) break;
      if (std::chrono::steady_clock::now() > hang) return std::nullopt;
    }
    clock.Advance(step);
  }
}
std::optional<Clock::Duration> AdvanceUntil(FakeClock& clock, Clock::Duration step,
                                            const std::function<bool()>& pred, int waiters) {
  return AdvanceUntil(clock, step, pred, [waiters] { return waiters; });
}

// Threads on the clock: a leader sleeps between renewals and its watchdog
// waits for the renew deadline; a follower sleeps between attempts.
constexpr int kLeaderWaiters = 2;
constexpr int kFollowerWaiters = 1;

using kc::testutil::Eventually;

struct Candidate {
  std::unique_ptr<LeaderElector> elector;
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  std::atomic<bool> work_stopped{false};
  std::mutex mu;
  std::vector<std::string> new_leaders;
  std::stop_source stop;
  std::jthread thread;

  // With `gated`, the candidate joins the election only after OpenGate().
  std::mutex gate_mu;
  std::condition_variable_any gate_cv;
  bool gate_open = false;

  Candidate(Client& client, FakeClock& clock, const std::string& id, bool release = true,
            bool gated = false) {
    LeaderElectionConfig c;
    if (gated) {
      c.ready_to_lead = [this](std::stop_token stop) {
        std::unique_lock<std::mutex> l(gate_mu);
        return gate_cv.wait(l, std::move(stop), [this] { return gate_open; });
      };
    }
    c.lease_namespace = kNs;
    c.lease_name = kName;
    c.identity = id;
    c.lease_duration = seconds(15);
    c.renew_deadline = seconds(10);
    c.retry_period = seconds(2);
    c.release_on_cancel = release;
    c.clock = &clock;
    c.on_error = [](const Status&) {};
    c.callbacks.on_started_leading = [this](std::stop_token token) {
      ++started;
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock<std::mutex> l(m);
      cv.wait(l, std::move(token), [] { return false; });
      work_stopped = true;
    };
    c.callbacks.on_stopped_leading = [this] { ++stopped; };
    c.callbacks.on_new_leader = [this](const std::string& who) {
      std::lock_guard<std::mutex> l(mu);
      new_leaders.push_back(who);
    };
    auto e = LeaderElector::Create(client, c);
    EXPECT_TRUE(e.ok()) << e.status();
    elector = std::move(e).value();
  }
  void Start() {
    thread = std::jthread([this] { elector->Run(stop.get_token()); });
  }
  void OpenGate() {
    {
      std::lock_guard<std::mutex> l(gate_mu);
      gate_open = true;
    }
    gate_cv.notify_all();
  }
  void Stop() {
    stop.request_stop();
    if (thread.joinable()) thread.join();
  }
  std::vector<std::string> Leaders() {
    std::lock_guard<std::mutex> l(mu);
    return new_leaders;
  }
};

LeaseRecord Lease(FakeClient& client) {
  auto l = client.Get(resources::kLeases, kNs, kName);
  EXPECT_TRUE(l.ok()) << l.status();
  return l.ok() ? LeaseRecordFromJson(*l) : LeaseRecord{};
}

TEST(DecideLeaseActionTest, Table) {
  const api::Time now = api::Time(seconds(1'800'000'000));
  struct Case {
    std::string holder;
    std::optional<api::Time> renew;
    int64_t duration;
    LeaseAction want;
  };
  const std::vector<Case> cases = {
      {"me", now - seconds(100), 15, LeaseAction::kRenew},  // ours, even if expired
      {"", now, 15, LeaseAction::kTakeOver},                // released
      {"other", std::nullopt, 15, LeaseAction::kTakeOver},  // never renewed
      {"other", now - seconds(5), 15, LeaseAction::kHeldByOther},
      {"other", now - seconds(15), 15, LeaseAction::kHeldByOther},  // expires exactly now
      {"other", now - seconds(16), 15, LeaseAction::kTakeOver},
      {"other", now - seconds(2), 1, LeaseAction::kTakeOver},
  };
  for (const auto& c : cases) {
    LeaseRecord r;
    r.holder = c.holder;
    r.renew_time = c.renew;
    r.lease_duration_seconds = c.duration;
    EXPECT_EQ(DecideLeaseAction(r, "me", now), c.want) << c.holder;
  }
}

TEST(LeaseRecordTest, JsonRoundTrip) {
  LeaseRecord r;
  r.holder = "a";
  r.lease_duration_seconds = 15;
  r.acquire_time = api::Time(seconds(1'800'000'000));
  r.renew_time = api::Time(seconds(1'800'000'010)) + std::chrono::microseconds(5);
  r.lease_transitions = 3;
  Json lease = {{"metadata", {{"name", "x"}}}};
  LeaseRecordToJson(r, &lease);
  EXPECT_EQ(lease["spec"]["renewTime"], "2027-01-15T08:00:10.000005Z");
  LeaseRecord back = LeaseRecordFromJson(lease);
  EXPECT_EQ(back.holder, "a");
  EXPECT_EQ(back.lease_duration_seconds, 15);
  EXPECT_EQ(back.renew_time, r.renew_time);
  EXPECT_EQ(back.lease_transitions, 3);
  r.holder.clear();
  LeaseRecordToJson(r, &lease);
  EXPECT_FALSE(lease["spec"].contains("holderIdentity"));
}

TEST(LeaderElectionConfigTest, Validation) {
  LeaderElectionConfig c;
  c.lease_namespace = "ns";
  c.lease_name = "l";
  c.identity = "me";
  EXPECT_TRUE(ValidateLeaderElectionConfig(c).ok());
  auto bad = c;
  bad.identity.clear();
  EXPECT_NE(ValidateLeaderElectionConfig(bad).message().find("identity"), std::string::npos);
  bad = c;
  bad.renew_deadline = bad.lease_duration;
  EXPECT_NE(ValidateLeaderElectionConfig(bad).message().find("renew_deadline"), std::string::npos);
  bad = c;
  bad.retry_period = bad.renew_deadline;
  EXPECT_FALSE(ValidateLeaderElectionConfig(bad).ok());
  FakeClient client;
  EXPECT_FALSE(LeaderElector::Create(client, bad).ok());
}

TEST(LeaderElectorTest, AcquiresByCreatingTheLeaseAndRenews) {
  FakeClient client;
  FakeClock clock;
  Candidate a(client, clock, "a");
  a.Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader() && a.started == 1; }));
  LeaseRecord l = Lease(client);
  EXPECT_EQ(l.holder, "a");
  EXPECT_EQ(l.lease_duration_seconds, 15);
  EXPECT_EQ(l.lease_transitions, 0);
  EXPECT_EQ(a.Leaders(), std::vector<std::string>{"a"});
  const api::Time first_renew = *l.renew_time;
  ASSERT_TRUE(AdvanceUntil(
      clock, milliseconds(500), [&] { return *Lease(client).renew_time > first_renew; },
      kLeaderWaiters));
  EXPECT_EQ(Lease(client).acquire_time, l.acquire_time);  // a renewal keeps acquireTime
  a.Stop();
  EXPECT_EQ(a.stopped, 1);
  EXPECT_TRUE(a.work_stopped);
}

TEST(LeaderElectorTest, ExactlyOneOfTwoLeadsAndTheOtherTakesOverAfterExpiry) {
  FakeClient client;
  FakeClock clock;
  Candidate a(client, clock, "a", /*release=*/false);
  a.Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader(); }));
  Candidate b(client, clock, "b");
  b.Start();
  // b keeps trying for several lease renewals and never leads.
  ASSERT_TRUE(AdvanceUntil(
      clock, milliseconds(500),
      [&] {
        return b.Leaders() == std::vector<std::string>{"a"} &&
               clock.Now() > Clock::TimePoint() + std::chrono::hours(1000) + seconds(30);
      },
      kLeaderWaiters + kFollowerWaiters));
  EXPECT_TRUE(a.elector->IsLeader());
  EXPECT_FALSE(b.elector->IsLeader());
  EXPECT_EQ(b.started, 0);

  // a dies without releasing: b takes over once the lease expires.
  a.Stop();
  EXPECT_EQ(Lease(client).holder, "a");
  // Only b's retry sleep waits on the clock now.
  auto took = AdvanceUntil(
      clock, milliseconds(250), [&] { return b.elector->IsLeader(); }, /*waiters=*/1);
  ASSERT_TRUE(took);
  EXPECT_LE(*took, seconds(15) + seconds(2) + seconds(1));  // lease + retry period (+ step)
  LeaseRecord l = Lease(client);
  EXPECT_EQ(l.holder, "b");
  EXPECT_EQ(l.lease_transitions, 1);
  ASSERT_TRUE(Eventually([&] { return b.started == 1; }));
  EXPECT_EQ(b.Leaders(), (std::vector<std::string>{"a", "b"}));
  b.Stop();
}

// A leader SIGKILLed and restarted under the same identity (a container
// restart) finds the Lease still its own: DecideLeaseAction says renew, even
// when expired. Gated on ready_to_lead (the operator: its caches synced), it
// leaves the Lease alone meanwhile, so the synced standby takes over once the
// Lease expires instead of waiting out the restarted replica's relist (the
// fault campaign, bench/faults: a leader kill at 1,000 nodes took 21-84 s,
// the restarted leader relisting while holding the Lease).
TEST(LeaderElectorTest, ARestartedLeaderNotReadyLeavesItsLeaseToTheStandby) {
  FakeClient client;
  FakeClock clock;
  auto a = std::make_unique<Candidate>(client, clock, "a", /*release=*/false);
  a->Start();
  ASSERT_TRUE(Eventually([&] { return a->elector->IsLeader(); }));
  Candidate b(client, clock, "b");
  b.Start();
  ASSERT_TRUE(Eventually([&] { return b.Leaders() == std::vector<std::string>{"a"}; }));
  a->Stop();  // SIGKILL: the Lease is not released
  a.reset();
  Candidate restarted(client, clock, "a", /*release=*/true, /*gated=*/true);
  restarted.Start();
  // Only b's retry sleep waits on the clock: the restarted one waits at its gate.
  auto took = AdvanceUntil(
      clock, milliseconds(250), [&] { return b.elector->IsLeader(); }, /*waiters=*/1);
  ASSERT_TRUE(took);
  EXPECT_LE(*took, seconds(15) + seconds(2) + seconds(1));  // lease + retry period (+ step)
  EXPECT_EQ(Lease(client).holder, "b");
  EXPECT_EQ(restarted.Leaders(), std::vector<std::string>{});  // it never read the Lease
  // Ready now: it joins as a follower.
  restarted.OpenGate();
  ASSERT_TRUE(Eventually([&] { return restarted.Leaders() == std::vector<std::string>{"b"}; }));
  ASSERT_TRUE(AdvanceUntil(
      clock, milliseconds(500),
      [&] { return clock.Now() > Clock::TimePoint() + std::chrono::hours(1000) + seconds(60); },
      kLeaderWaiters + kFollowerWaiters));
  EXPECT_FALSE(restarted.elector->IsLeader());
  EXPECT_EQ(restarted.started, 0);
  EXPECT_TRUE(b.elector->IsLeader());
  restarted.Stop();
  b.Stop();
}

TEST(LeaderElectorTest, WithoutTheGateARestartedLeaderRenewsItsOwnLeaseAtOnce) {
  FakeClient client;
  FakeClock clock;
  auto a = std::make_unique<Candidate>(client, clock, "a", /*release=*/false);
  a->Start();
  ASSERT_TRUE(Eventually([&] { return a->elector->IsLeader(); }));
  a->Stop();
  a.reset();
  Candidate restarted(client, clock, "a");
  restarted.Start();
  ASSERT_TRUE(Eventually([&] { return restarted.elector->IsLeader(); }));
  EXPECT_EQ(Lease(client).lease_transitions, 0);  // renewed, not taken over
  restarted.Stop();
}

TEST(LeaderElectorTest, StopWhileWaitingAtTheGateReturnsWithoutTouchingTheLease) {
  FakeClient client;
  FakeClock clock;
  Candidate a(client, clock, "a", /*release=*/true, /*gated=*/true);
  a.Start();
  a.Stop();
  EXPECT_FALSE(client.Get(resources::kLeases, kNs, kName).ok());  // never created
  EXPECT_EQ(a.started, 0);
  EXPECT_EQ(a.stopped, 0);
}

TEST(LeaderElectorTest, GracefulReleaseHandsOverAtTheNextRetry) {
  FakeClient client;
  FakeClock clock;
  Candidate a(client, clock, "a");
  a.Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader(); }));
  Candidate b(client, clock, "b");
  b.Start();
  ASSERT_TRUE(Eventually([&] { return b.Leaders() == std::vector<std::string>{"a"}; }));
  a.Stop();
  LeaseRecord released = Lease(client);
  EXPECT_EQ(released.holder, "");
  EXPECT_EQ(released.lease_duration_seconds, 1);
  // Only b's retry sleep waits on the clock now.
  auto took = AdvanceUntil(
      clock, milliseconds(250), [&] { return b.elector->IsLeader(); }, /*waiters=*/1);
  ASSERT_TRUE(took);
  EXPECT_LE(*took, seconds(2) + seconds(1));  // one retry period, not a lease duration
  EXPECT_EQ(Lease(client).holder, "b");
  b.Stop();
}

TEST(LeaderElectorTest, LosesLeadershipWhenRenewalsFailPastTheDeadline) {
  FakeClient client;
  FakeClock clock;
  Candidate a(client, clock, "a");
  a.Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader() && a.started == 1; }));
  client.SetReactor([](const FakeAction& act) {
    return act.verb == "update" ? UnavailableError("apiserver down") : OkStatus();
  });
  const Clock::TimePoint failing_since = clock.Now();
  // The watchdog leaves the clock when it fires (the work then stops).
  auto lost = AdvanceUntil(
      clock, milliseconds(250), [&] { return a.stopped == 1; },
      [&] { return a.work_stopped ? 1 : kLeaderWaiters; });
  ASSERT_TRUE(lost);
  EXPECT_GE(clock.Now() - failing_since, seconds(10));  // kept leading until the deadline
  EXPECT_LT(*lost, seconds(15));                        // and stopped before the lease expired
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_TRUE(a.work_stopped);
  a.thread.join();  // Run returned on its own
}

TEST(LeaderElectorTest, WorkStopsAtTheRenewDeadlineEvenWhileARenewalHangs) {
  FakeClient client;
  FakeClock clock;
  Candidate a(client, clock, "a");
  a.Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader() && a.started == 1; }));
  // Renewals hang (a partitioned connection without a timeout) until released.
  std::mutex mu;
  std::condition_variable cv;
  bool hang = true;
  std::atomic<bool> hanging{false};
  client.SetReactor([&](const FakeAction& act) {
    if (act.verb != "get") return OkStatus();
    std::unique_lock<std::mutex> l(mu);
    hanging = true;
    cv.wait(l, [&] { return !hang; });
    return UnavailableError("timed out");
  });
  const Clock::TimePoint since = clock.Now();
  ASSERT_TRUE(AdvanceUntil(
      clock, milliseconds(250), [&] { return hanging.load(); }, kLeaderWaiters));
  // Only the watchdog is on the clock: the renewal hangs in the client.
  auto stopped_work = AdvanceUntil(
      clock, milliseconds(250), [&] { return a.work_stopped.load(); }, 1);
  ASSERT_TRUE(stopped_work);
  EXPECT_GE(clock.Now() - since, seconds(10));  // the renew deadline
  EXPECT_LT(clock.Now() - since, seconds(15));  // before the lease can be taken
  EXPECT_FALSE(a.elector->IsLeader());
  EXPECT_EQ(a.stopped, 0);  // Run is still inside the hanging call
  {
    std::lock_guard<std::mutex> l(mu);
    hang = false;
  }
  cv.notify_all();
  a.thread.join();  // Run returns once the call comes back
  EXPECT_EQ(a.stopped, 1);
}

TEST(LeaderElectorTest, LosesAtOnceWhenAnotherHolderIsSeen) {
  FakeClient client;
  FakeClock clock;
  Candidate a(client, clock, "a");
  a.Start();
  ASSERT_TRUE(Eventually([&] { return a.elector->IsLeader(); }));
  ASSERT_TRUE(client
                  .Patch(resources::kLeases, kNs, kName, PatchType::kMerge,
                         {{"spec", {{"holderIdentity", "intruder"}}}})
                  .ok());
  ASSERT_TRUE(AdvanceUntil(
      clock, milliseconds(250), [&] { return a.stopped == 1; }, kLeaderWaiters));
  EXPECT_EQ(a.elector->GetLeader(), "intruder");
  a.thread.join();
}

TEST(LeaderElectorTest, ConflictIsRetriedNextPeriod) {
  FakeClient client;
  FakeClock clock;
  std::atomic<int> conflicts{0};
  client.SetReactor([&](const FakeAction& act) {
    if (act.verb == "update" && conflicts.fetch_add(1) < 2) return ConflictError("modified");
    return OkStatus();
  });
  // Pre-existing, expired lease of someone else: taking it needs an Update.
  Json lease = {{"metadata", {{"name", kName}, {"namespace", kNs}}}};
  LeaseRecord old;
  old.holder = "gone";
  old.lease_duration_seconds = 15;
  old.renew_time = clock.WallNow() - seconds(60);
  old.lease_transitions = 4;
  LeaseRecordToJson(old, &lease);
  ASSERT_TRUE(client.Create(resources::kLeases, kNs, lease).ok());
  Candidate a(client, clock, "a");
  a.Start();
  ASSERT_TRUE(AdvanceUntil(
      clock, milliseconds(500), [&] { return a.elector->IsLeader(); }, kFollowerWaiters));
  EXPECT_GE(conflicts, 3);
  EXPECT_EQ(Lease(client).lease_transitions, 5);
  a.Stop();
}

}  // namespace
}  // namespace kc::kube
