#include "initwarm/gc.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "initwarm/fsutil.h"
#include "initwarm/inspect.h"
#include "initwarm/lock.h"
#include "initwarm/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using Kind = GcEntry::Kind;

const std::string kA = "aaaaaaaaaaaaaaaa";
const std::string kB = "bbbbbbbbbbbbbbbb";

struct PlanCase {
  std::string name;
  GcEntry entry;
  bool keep_a;
  bool remove_unkept;
  bool want_remove;
};

TEST(PlanGc, Table) {
  const std::int64_t now = 100000;
  const PlanCase cases[] = {
      {"kept published", {Kind::kPublished, "v1/" + kA, kA, 0, false}, true, true, false},
      {"unkept published", {Kind::kPublished, "v1/" + kB, kB, 0, false}, true, true, true},
      {"no --keep: published left",
       {Kind::kPublished, "v1/" + kB, kB, 0, false},
       false,
       false,
       false},
      {"old staging", {Kind::kStaging, "s/" + kB + "-j", kB, 0, false}, true, true, true},
      {"young staging", {Kind::kStaging, "s/" + kB + "-j", kB, now - 60, false}, true, true, false},
      {"old staging, live writer",
       {Kind::kStaging, "s/" + kB + "-j", kB, 0, true},
       true,
       true,
       false},
      {"old staging of kept fp",
       {Kind::kStaging, "s/" + kA + "-j", kA, 0, false},
       true,
       true,
       false},
      {"quarantine", {Kind::kQuarantine, "q/" + kA + "-t", kA, now, false}, true, true, true},
      {"dead lock", {Kind::kLock, "l/" + kB + ".lock", kB, 0, false}, true, true, true},
      {"live lock", {Kind::kLock, "l/" + kB + ".lock", kB, 0, true}, true, true, false},
  };
  for (const auto& c : cases) {
    GcPolicy p;
    if (c.keep_a) p.keep.insert(kA);
    p.remove_unkept = c.remove_unkept;
    p.staging_max_age_s = 3600;
    p.now = now;
    auto plan = PlanGc({c.entry}, p);
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].remove, c.want_remove) << c.name << ": " << plan[0].why;
  }
}

void Age(const fs::path& p, std::int64_t seconds) {
  std::int64_t t = NowSeconds() - seconds;
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), ts, AT_SYMLINK_NOFOLLOW), 0);
}

TEST(Gc, ScanApplyAndDryRun) {
  testing::ScratchDir d;
  core::Layout l(d.path());
  testing::WriteTritonCache(l.Published(kA), 1);
  testing::WriteFile(l.Published(kA) / "READY", "x");
  testing::WriteTritonCache(l.Published(kB), 1);
  testing::WriteFile(l.Staging(kB, "old") / "triton/x", "x");
  Age(l.Staging(kB, "old"), 100000);
  testing::WriteFile(l.Staging(kB, "live") / "triton/x", "x");
  Age(l.Staging(kB, "live"), 100000);
  ASSERT_TRUE(AcquireLock(l.Lock(kB), SelfLockRecord("live", ""), {}).ok());
  testing::WriteFile(l.Quarantine(kA, "20260101T000000Z") / "REASON", "bad");
  testing::WriteFile(l.VersionDir() / "lost+found" / "x", "unrelated");

  auto entries = ScanVolume(l, 7200);
  ASSERT_TRUE(entries.ok()) << entries.status();
  GcPolicy p;
  p.keep = {kA};
  p.remove_unkept = true;
  p.now = NowSeconds();
  auto plan = PlanGc(*entries, p);
  int removals = 0;
  for (const auto& x : plan) removals += x.remove;
  EXPECT_EQ(removals, 3);  // v1/B, old staging, quarantine
  ASSERT_TRUE(ApplyGc(l, plan).ok());
  EXPECT_TRUE(Exists(l.Ready(kA)));
  EXPECT_FALSE(Exists(l.Published(kB)));
  EXPECT_FALSE(Exists(l.Staging(kB, "old")));
  EXPECT_TRUE(Exists(l.Staging(kB, "live")));
  EXPECT_TRUE(Exists(l.Lock(kB)));
  EXPECT_TRUE(Exists(l.VersionDir() / "lost+found" / "x"));
  EXPECT_TRUE(fs::is_empty(l.QuarantineRoot()));
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
