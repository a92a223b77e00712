#include "initwarm/cache/lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

LockRecord Rec(std::string owner, std::string host, std::string boot, std::int64_t pid,
               std::int64_t started) {
  return {std::move(owner), std::move(host), std::move(boot), pid, started, ""};
}

struct JudgeCase {
  std::string name;
  LockRecord holder;
  std::int64_t mtime;
  bool pid_alive;
  LockVerdict want;
};

TEST(JudgeLock, Table) {
  const LockRecord me = Rec("job-b", "h1", "boot1", 200, 10000);
  const std::int64_t now = 10000;
  const std::int64_t stale = 3600;
  const JudgeCase cases[] = {
      {"same owner (prepare then seal)", Rec("job-b", "h2", "boot9", 1, 100), 100, false,
       LockVerdict::kMine},
      {"other owner, same host, alive", Rec("job-a", "h1", "boot1", 100, 9990), 9990, true,
       LockVerdict::kHeld},
      {"other owner, same host, dead pid", Rec("job-a", "h1", "boot1", 100, 9990), 9990, false,
       LockVerdict::kStale},
      {"other owner, same host, rebooted", Rec("job-a", "h1", "boot0", 100, 9990), 9990, true,
       LockVerdict::kStale},
      {"job-owned lock (prepare exited, pid 0), same host", Rec("job-a", "h1", "boot1", 0, 9990),
       9990, false, LockVerdict::kHeld},
      {"other host, fresh", Rec("job-a", "h2", "boot7", 100, 9990), 9990, false,
       LockVerdict::kHeld},
      {"other host, old", Rec("job-a", "h2", "boot7", 100, 1000), 1000, true, LockVerdict::kStale},
      {"other host, old start but fresh mtime", Rec("job-a", "h2", "boot7", 100, 1000), 9000, true,
       LockVerdict::kHeld},
  };
  for (const auto& c : cases) {
    auto j = JudgeLock(c.holder, c.mtime, me, now, stale, c.pid_alive);
    EXPECT_EQ(j.verdict, c.want) << c.name << ": " << j.why;
  }
}

// The operator names the owners whose Jobs it saw finish or disappear;
// only those locks break early, and a live owner's lock never does.
TEST(JudgeLock, DeadOwnersNamedByTheOperator) {
  const LockRecord me = Rec("job-c", "h1", "boot1", 0, 10000);
  const std::int64_t now = 10000;
  const std::int64_t stale = 7200;
  struct Case {
    std::string name;
    LockRecord holder;
    std::vector<std::string> dead;
    LockVerdict want;
  } cases[] = {
      {"prepare-held lock of a failed Job, named dead",
       Rec("job-a", "h2", "boot7", 0, 9990),
       {"job-a"},
       LockVerdict::kStale},
      {"named among several",
       Rec("job-a", "h2", "boot7", 0, 9990),
       {"job-x", "job-a"},
       LockVerdict::kStale},
      {"live owner not named", Rec("job-b", "h2", "boot7", 0, 9990), {"job-a"}, LockVerdict::kHeld},
      {"no list: fresh foreign lock held",
       Rec("job-a", "h2", "boot7", 0, 9990),
       {},
       LockVerdict::kHeld},
      {"our own lock stays ours even if listed",
       Rec("job-c", "h2", "boot7", 0, 9990),
       {"job-c"},
       LockVerdict::kMine},
      {"prefix of a dead uid is not it",
       Rec("job-a1", "h2", "boot7", 0, 9990),
       {"job-a"},
       LockVerdict::kHeld},
  };
  for (const auto& c : cases) {
    auto j = JudgeLock(c.holder, c.holder.started, me, now, stale, true, c.dead);
    EXPECT_EQ(j.verdict, c.want) << c.name << ": " << j.why;
  }
}

TEST(Lock, RoundTrip) {
  LockRecord r = Rec("job-a", "h", "b", 5, 6);
  r.staging = "/x";
  auto back = ParseLock(LockToJson(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, r);
  EXPECT_FALSE(ParseLock("{}").ok());
}

TEST(Lock, AcquireReleaseAndConflict) {
  testing::ScratchDir d;
  auto path = d.path() / "locks" / "fp.lock";
  LockRecord a = SelfLockRecord("job-a", "");
  ASSERT_TRUE(AcquireLock(path, a, {}).ok());
  // Same owner adopts (the seal after prepare).
  EXPECT_TRUE(AcquireLock(path, SelfLockRecord("job-a", ""), {}).ok());
  // Another owner on this host while our pid lives: held, message names the holder.
  Status s = AcquireLock(path, SelfLockRecord("job-b", ""), {});
  ASSERT_TRUE(IsConflict(s)) << s;
  EXPECT_NE(s.message().find("job-a"), std::string::npos) << s;
  // Release by the wrong owner is refused; by the right one works.
  EXPECT_TRUE(IsConflict(ReleaseLock(path, "job-b")));
  EXPECT_TRUE(ReleaseLock(path, "job-a").ok());
  EXPECT_FALSE(Exists(path));
  EXPECT_TRUE(ReleaseLock(path, "job-a").ok());  // absent is fine
  // No temp files are left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path.parent_path())) {
    ++entries;
  }
  EXPECT_EQ(entries, 0);
}

// A HeldLock releases its lock on every way out of its scope, unless it
// was handed on (to a seal that adopts and releases it).
TEST(Lock, HeldLockReleasesAtScopeExitUnlessHandedOn) {
  testing::ScratchDir d;
  auto path = d.path() / "locks" / "fp.lock";
  ASSERT_TRUE(AcquireLock(path, SelfLockRecord("job-a", ""), {}).ok());
  { HeldLock held(path, "job-a"); }
  EXPECT_FALSE(Exists(path));
  ASSERT_TRUE(AcquireLock(path, SelfLockRecord("job-a", ""), {}).ok());
  {
    HeldLock held(path, "job-a");
    held.HandOn();
  }
  EXPECT_TRUE(Exists(path));
  // Another owner's lock is never removed by it.
  { HeldLock wrong(path, "job-b"); }
  EXPECT_TRUE(Exists(path));
}

TEST(Lock, JobOwnedLockIsAdoptedWithThePidOfTheSealer) {
  testing::ScratchDir d;
  auto path = d.path() / "fp.lock";
  LockOptions prep;
  prep.record_pid = false;
  ASSERT_TRUE(AcquireLock(path, SelfLockRecord("job-a", ""), prep).ok());
  EXPECT_EQ((*ReadLock(path))->pid, 0);
  // Another job is refused although no process holds the lock.
  EXPECT_TRUE(IsConflict(AcquireLock(path, SelfLockRecord("job-b", ""), {})));
  // The same job's sealer adopts it and records its pid.
  ASSERT_TRUE(AcquireLock(path, SelfLockRecord("job-a", ""), {}).ok());
  EXPECT_EQ((*ReadLock(path))->pid, ::getpid());
}

TEST(Lock, BreaksLockOfOwnerDeclaredDead) {
  testing::ScratchDir d;
  auto path = d.path() / "fp.lock";
  LockOptions prep;
  prep.record_pid = false;
  ASSERT_TRUE(AcquireLock(path, SelfLockRecord("job-failed", ""), prep).ok());
  LockOptions next = prep;
  next.dead_owners = {"job-other"};
  EXPECT_TRUE(IsConflict(AcquireLock(path, SelfLockRecord("job-next", ""), next)));
  next.dead_owners = {"job-failed"};
  ASSERT_TRUE(AcquireLock(path, SelfLockRecord("job-next", ""), next).ok());
  EXPECT_EQ((*ReadLock(path))->owner, "job-next");
  // The new live owner is not broken by a third writer naming the old one.
  EXPECT_TRUE(IsConflict(AcquireLock(path, SelfLockRecord("job-third", ""), next)));
}

TEST(Lock, BreaksStaleLockOfDeadWriter) {
  testing::ScratchDir d;
  auto path = d.path() / "fp.lock";
  // A writer on this host whose process is gone (pid 0x7ffffff0 never exists).
  LockRecord dead = SelfLockRecord("job-dead", "");
  dead.pid = 0x7ffffff0;
  testing::WriteFile(path, LockToJson(dead));
  ASSERT_TRUE(AcquireLock(path, SelfLockRecord("job-new", ""), {}).ok());
  auto now = ReadLock(path);
  ASSERT_TRUE(now.ok() && now->has_value());
  EXPECT_EQ((*now)->owner, "job-new");
}

TEST(Lock, BreaksLockOlderThanStaleAfter) {
  testing::ScratchDir d;
  auto path = d.path() / "fp.lock";
  LockRecord other = Rec("job-far", "another-host", "boot", 1, NowSeconds() - 7200);
  testing::WriteFile(path, LockToJson(other));
  struct timespec ts[2] = {{NowSeconds() - 7200, 0}, {NowSeconds() - 7200, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), ts, 0), 0);
  LockOptions o;
  o.stale_after_s = 3600;
  EXPECT_TRUE(AcquireLock(path, SelfLockRecord("job-new", ""), o).ok());
  // A fresh foreign lock is not broken.
  testing::WriteFile(path, LockToJson(Rec("job-far", "another-host", "boot", 1, NowSeconds())));
  EXPECT_TRUE(IsConflict(AcquireLock(path, SelfLockRecord("job-new2", ""), o)));
}

}  // namespace
}  // namespace kc::initwarm
