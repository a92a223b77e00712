#include "initwarm/cache/gc.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "initwarm/cache/inspect.h"
#include "initwarm/cache/lock.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using Kind = GcEntry::Kind;

const std::string kA = "aaaaaaaaaaaaaaaa";
const std::string kB = "bbbbbbbbbbbbbbbb";

const std::string kDigestA(64, '1');
const std::string kDigestA2(64, '2');

struct PlanCase {
  std::string name;
  GcEntry entry;
  bool scoped;  // --remove A:kDigestA given (the operator's GC Job)
  bool want_remove;
};

GcEntry Published(const std::string& fp, const std::string& ready) {
  return {Kind::kPublished, "v1/" + fp, fp, 0, false, ready};
}

TEST(PlanGc, Table) {
  const std::int64_t now = 100000;
  const PlanCase cases[] = {
      {"listed published, digest matches", Published(kA, kDigestA), true, true},
      {"listed published, sealed again since", Published(kA, kDigestA2), true, false},
      {"listed published without READY", Published(kA, ""), true, false},
      {"unlisted published (another KernelCache's)", Published(kB, kDigestA), true, false},
      {"no --remove: published never removed", Published(kA, kDigestA), false, false},
      {"old staging of listed fp", {Kind::kStaging, "s/" + kA + "-j", kA, 0, false}, true, true},
      {"old staging of unlisted fp", {Kind::kStaging, "s/" + kB + "-j", kB, 0, false}, true, false},
      {"old staging, admin run", {Kind::kStaging, "s/" + kB + "-j", kB, 0, false}, false, true},
      {"young staging", {Kind::kStaging, "s/" + kA + "-j", kA, now - 60, false}, true, false},
      {"old staging, live writer", {Kind::kStaging, "s/" + kA + "-j", kA, 0, true}, true, false},
      {"quarantine of listed fp",
       {Kind::kQuarantine, "q/" + kA + "-t", kA, now, false},
       true,
       true},
      {"quarantine of unlisted fp",
       {Kind::kQuarantine, "q/" + kB + "-t", kB, now, false},
       true,
       false},
      {"dead lock", {Kind::kLock, "l/" + kA + ".lock", kA, 0, false}, true, true},
      {"live lock", {Kind::kLock, "l/" + kA + ".lock", kA, 0, true}, true, false},
      {"inbox of listed fp", {Kind::kInbox, "i/" + kA + "/p", kA, now, false}, true, true},
      {"young inbox of unlisted fp",
       {Kind::kInbox, "i/" + kB + "/p", kB, now, false},
       false,
       false},
      {"old inbox, admin run", {Kind::kInbox, "i/" + kB + "/p", kB, 0, false}, false, true},
      {"young staging of a dead owner",
       {Kind::kStaging, "s/" + kA + "-dead", kA, now, false, "", "dead"},
       true,
       true},
      {"young lock of a dead owner",
       {Kind::kLock, "l/" + kA + ".lock", kA, now, false, "", "dead"},
       true,
       true},
      {"young staging of another owner",
       {Kind::kStaging, "s/" + kA + "-other", kA, now, false, "", "other"},
       true,
       false},
      {"dead owner of an unlisted fp",
       {Kind::kLock, "l/" + kB, kB, now, false, "", "dead"},
       true,
       false},
      {"unparsable staging name, operator run",
       {Kind::kStaging, "s/zz", "", 0, false},
       true,
       false},
  };
  for (const auto& c : cases) {
    GcPolicy p;
    if (c.scoped) {
      p.remove[kA] = kDigestA;
      p.scoped = true;
    }
    p.staging_max_age_s = 3600;
    p.now = now;
    p.dead_owners = {"dead"};
    auto plan = PlanGc({c.entry}, p);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].remove, c.want_remove) << c.name << ": " << plan[0].why;
  }
  // A kept fingerprint is never touched, even when listed.
  GcPolicy p;
  p.keep = {kA};
  p.remove[kA] = kDigestA;
  p.scoped = true;
  EXPECT_FALSE(PlanGc({Published(kA, kDigestA)}, p)[0].remove);
}

TEST(ParseRemoveSpec, Forms) {
  std::map<std::string, std::string> m;
  ASSERT_TRUE(ParseRemoveSpec(kA, &m).ok());
  ASSERT_TRUE(ParseRemoveSpec(kB + ":" + kDigestA, &m).ok());
  EXPECT_EQ(m.at(kA), "");
  EXPECT_EQ(m.at(kB), kDigestA);
  for (std::string bad : {std::string("zz"), kA + ":", kA + ":abc", kA + ":" + std::string(64, 'G'),
                          std::string(":") + kDigestA}) {
    Status s = ParseRemoveSpec(bad, &m);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("--remove"), std::string::npos) << s;
  }
}

// The names `initwarm gc` is given, decoded into its policy: each refusal
// names its flag, and the ages of the base are kept.
TEST(GcPolicyOf, Table) {
  GcPolicy base;
  base.staging_max_age_s = 60;
  base.now = 1000;
  struct Case {
    std::string name;
    GcNames names;
    std::string error;  // substring; "" = accepted
  } cases[] = {
      {"nothing", {}, ""},
      {"remove with digest, keep another, a dead owner",
       {{kA + ":" + kDigestA}, {kB}, {"job-uid-1"}, true},
       ""},
      {"keep not an id", {{}, {"zz"}, {}, false}, "--keep \"zz\""},
      {"remove malformed", {{kA + ":abc"}, {}, {}, true}, "--remove"},
      {"remove a kept one", {{kA}, {kA}, {}, true}, "also in --keep"},
      {"unsafe owner", {{}, {}, {"../x"}, false}, "--break-lock-of \"../x\" is unsafe"},
  };
  for (const auto& c : cases) {
    auto p = GcPolicyOf(c.names, base);
    if (!c.error.empty()) {
      ASSERT_FALSE(p.ok()) << c.name;
      EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << c.name;
      EXPECT_NE(p.status().message().find(c.error), std::string::npos) << p.status();
      continue;
    }
    ASSERT_TRUE(p.ok()) << c.name << ": " << p.status();
    EXPECT_EQ(p->staging_max_age_s, 60) << c.name;
    EXPECT_EQ(p->now, 1000) << c.name;
    EXPECT_EQ(p->scoped, c.names.scoped) << c.name;
    EXPECT_EQ(p->keep.size(), c.names.keep.size()) << c.name;
    EXPECT_EQ(p->remove.size(), c.names.remove.size()) << c.name;
    EXPECT_EQ(p->dead_owners.size(), c.names.break_lock_of.size()) << c.name;
  }
  auto p = GcPolicyOf({{kA + ":" + kDigestA}, {kB}, {"job-uid-1"}, true}, base);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->remove.at(kA), kDigestA);
  EXPECT_TRUE(p->keep.contains(kB));
  EXPECT_TRUE(p->dead_owners.contains("job-uid-1"));
}

void Age(const fs::path& p, std::int64_t seconds) {
  std::int64_t t = NowSeconds() - seconds;
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), ts, AT_SYMLINK_NOFOLLOW), 0);
}

// Two KernelCaches share one claim: A is this one's (stale, listed with the
// digest the operator recorded), B the other's. GC removes A and its
// leftovers only.
TEST(Gc, RemovesOnlyWhatItWasAskedToOnASharedVolume) {
  testing::ScratchDir d;
  core::Layout l(d.path());
  testing::WriteTritonCache(l.Published(kA), 1);
  testing::WriteFile(l.Ready(kA), kDigestA + "\n");
  testing::WriteTritonCache(l.Published(kB), 1);
  testing::WriteFile(l.Ready(kB), kDigestA2 + "\n");
  testing::WriteFile(l.Staging(kA, "old") / "triton/x", "x");
  Age(l.Staging(kA, "old"), 100000);
  testing::WriteFile(l.Staging(kB, "old") / "triton/x", "x");
  Age(l.Staging(kB, "old"), 100000);
  testing::WriteFile(l.Staging(kA, "live") / "triton/x", "x");
  Age(l.Staging(kA, "live"), 100000);
  testing::WriteFile(l.Quarantine(kB, "20260101T000000Z") / "REASON", "bad");
  testing::WriteFile(l.VersionDir() / "lost+found" / "x", "unrelated");

  auto entries = ScanVolume(l, 7200);
  ASSERT_TRUE(entries.ok()) << entries.status();
  GcPolicy p;
  p.remove[kA] = kDigestA;
  p.scoped = true;
  p.now = NowSeconds();
  auto plan = PlanGc(*entries, p);
  int removals = 0;
  for (const auto& x : plan) removals += x.remove;
  EXPECT_EQ(removals, 3);  // v1/A, A's two old staging dirs (no lock: no live writer)
  ASSERT_TRUE(ApplyGc(l, plan).ok());
  EXPECT_FALSE(Exists(l.Published(kA)));
  EXPECT_FALSE(Exists(l.Staging(kA, "old")));
  EXPECT_TRUE(Exists(l.Ready(kB)));
  EXPECT_TRUE(Exists(l.Staging(kB, "old")));
  EXPECT_TRUE(Exists(l.Quarantine(kB, "20260101T000000Z") / "REASON"));
  EXPECT_TRUE(Exists(l.VersionDir() / "lost+found" / "x"));
  EXPECT_FALSE(Exists(l.Lock(kA)));  // gc's own lock was released
}

// A cache sealed again after the GC Job was created (a re-warm, or another
// KernelCache) has a new digest: kept, even when it changes between plan
// and apply.
TEST(Gc, KeepsACacheSealedAfterTheListWasMade) {
  testing::ScratchDir d;
  core::Layout l(d.path());
  testing::WriteTritonCache(l.Published(kA), 1);
  testing::WriteFile(l.Ready(kA), kDigestA + "\n");
  GcPolicy p;
  p.remove[kA] = kDigestA;
  p.scoped = true;
  p.now = NowSeconds();
  auto plan = PlanGc(*ScanVolume(l, 7200), p);
  ASSERT_TRUE(plan[0].remove) << plan[0].why;
  testing::WriteFile(l.Ready(kA), kDigestA2 + "\n");  // re-sealed between plan and apply
  ASSERT_TRUE(ApplyGc(l, plan).ok());
  EXPECT_TRUE(Exists(l.Ready(kA)));
  // And the next run's plan keeps it and says why.
  plan = PlanGc(*ScanVolume(l, 7200), p);
  EXPECT_FALSE(plan[0].remove);
  EXPECT_NE(plan[0].why.find("sealed again"), std::string::npos) << plan[0].why;
}

TEST(Gc, SkipsACacheWhoseFingerprintALiveWriterHolds) {
  testing::ScratchDir d;
  core::Layout l(d.path());
  testing::WriteTritonCache(l.Published(kA), 1);
  testing::WriteFile(l.Ready(kA), kDigestA + "\n");
  ASSERT_TRUE(AcquireLock(l.Lock(kA), SelfLockRecord("warming", ""), {}).ok());
  GcPolicy p;
  p.remove[kA] = kDigestA;
  p.scoped = true;
  p.now = NowSeconds();
  Status s = ApplyGc(l, PlanGc(*ScanVolume(l, 7200), p));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
  EXPECT_TRUE(Exists(l.Ready(kA)));
  EXPECT_EQ((*ReadLock(l.Lock(kA)))->owner, "warming");
}

// A warmup the operator cancelled left its prepare's lock (pid 0: nothing
// to watch) and its staging, both fresh. Named in --break-lock-of, they go
// at once, and the cache is removed under a lock GC could take; unnamed,
// GC keeps away (a live writer, as far as it can tell).
TEST(Gc, BreaksTheLockAndStagingOfADeadOwner) {
  for (bool named : {false, true}) {
    testing::ScratchDir d;
    core::Layout l(d.path());
    testing::WriteTritonCache(l.Published(kA), 1);
    testing::WriteFile(l.Ready(kA), kDigestA + "\n");
    testing::WriteFile(l.Staging(kA, "cancelled") / "triton/x", "x");
    LockOptions prepare;
    prepare.record_pid = false;
    ASSERT_TRUE(AcquireLock(l.Lock(kA), SelfLockRecord("cancelled", ""), prepare).ok());
    const std::vector<std::string> dead =
        named ? std::vector<std::string>{"cancelled"} : std::vector<std::string>{};
    GcPolicy p;
    p.remove[kA] = kDigestA;
    p.scoped = true;
    p.now = NowSeconds();
    p.dead_owners = {dead.begin(), dead.end()};
    auto entries = ScanVolume(l, 7200, dead);
    ASSERT_TRUE(entries.ok()) << entries.status();
    Status s = ApplyGc(l, PlanGc(*entries, p), 7200, dead);
    if (named) {
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_FALSE(Exists(l.Published(kA)));
      EXPECT_FALSE(Exists(l.Staging(kA, "cancelled")));
      EXPECT_FALSE(Exists(l.Lock(kA)));
    } else {
      EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
      EXPECT_TRUE(Exists(l.Ready(kA)));
      EXPECT_TRUE(Exists(l.Staging(kA, "cancelled")));
      EXPECT_EQ((*ReadLock(l.Lock(kA)))->owner, "cancelled");
    }
  }
}

TEST(Inspect, Summarises) {
  testing::ScratchDir d;
  core::Layout l(d.path());
  testing::WriteTritonCache(l.Published(kA), 3);
  testing::WriteFile(l.Quarantine(kB, "20260101T000000Z") / "REASON",
                     "Checksums: triton/x: sha256 mismatch\n{}\n");
  auto s = InspectVolume(l, NowSeconds());
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 2u);
  const auto& pub = (*s)[0];
  EXPECT_EQ(pub.fingerprint, kA);
  EXPECT_FALSE(pub.ready);
  EXPECT_EQ(pub.triton_kernels, 3u);
  EXPECT_EQ(pub.by_framework.at("triton"), 12u);
  EXPECT_EQ(pub.by_framework.at("inductor"), 1u);
  EXPECT_EQ((*s)[1].note, "Checksums: triton/x: sha256 mismatch");
  std::string text = FormatSummaries(*s);
  EXPECT_NE(text.find("NOT READY"), std::string::npos) << text;
  EXPECT_NE(text.find("3 Triton kernels"), std::string::npos) << text;
}

}  // namespace
}  // namespace kc::initwarm
