// Wait against in-memory fakes of Resolver and Prober and a fake clock.
#include "initwarm/gate/wait.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/gate_report.h"
#include "core/manifest.h"
#include "initwarm/cache/prepare.h"
#include "initwarm/cache/seal.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

class FakeResolver : public Resolver {
 public:
  StatusOr<ResolveAnswer> Resolve(const std::string& ns, const std::string& kc,
                                  const std::string& node) override {
    ++calls;
    last_query = ns + "/" + kc + "/" + node;
    if (!error.ok()) return error;
    return answer;
  }
  ResolveAnswer answer;
  Status error;
  int calls = 0;
  std::string last_query;
};

class FakeProber : public Prober {
 public:
  StatusOr<ProbeResult> Probe() override {
    if (!error.ok()) return error;
    return ProbeResult{facts, "fake"};
  }
  core::NodeFacts facts;
  Status error;
};

class WaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() / "vol";
    view_ = dir_.path() / "run" / "view";
    fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
    resolver_.answer = {fp_,
                        core::ResolveState::kWarming,
                        "v1/" + fp_,
                        "",
                        "warmup Job kc-warm-1 running for 2m",
                        testing::H200Facts(),
                        /*final=*/false,
                        /*reason=*/""};
    prober_.facts = testing::H200Facts();
    deps_.resolver = &resolver_;
    deps_.prober = &prober_;
    deps_.now_ms = [this] { return now_ms_; };
    deps_.sleep_ms = [this](std::int64_t ms) {
      sleeps_.push_back(ms);
      now_ms_ += ms;
      if (on_sleep_) on_sleep_(static_cast<int>(sleeps_.size()));
    };
    deps_.log = [this](const std::string& l) { logs_.push_back(l); };
    opts_.root = root_;
    opts_.view = view_;
    opts_.ns = "ml";
    opts_.kernelcache = "llama";
    opts_.node = "gpu-1";
    opts_.timeout_s = 60;
    opts_.mode = core::ConsumeMode::kShared;  // the view links into the volume
  }

  // Seals a cache for fp_ (as `owner`, `kernels` Triton kernels) and
  // returns its manifest digest.
  std::string Publish(int arch = 90, const std::string& owner = "job-1", int kernels = 2,
                      bool replace = false) {
    PrepareOptions p;
    p.root = root_;
    p.fingerprint = fp_;
    p.owner = owner;
    auto pr = Prepare(p);
    EXPECT_TRUE(pr.ok()) << pr.status();
    if (!pr.ok()) return "";
    testing::WriteTritonCache(pr->staging, kernels, arch);
    SealOptions s;
    s.root = root_;
    s.owner = owner;
    s.node = testing::H200Facts();
    s.runtime = testing::TestRuntime();
    s.replace = replace;
    auto r = Seal(s);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->manifest_digest : "";
  }

  // The attacker's consistent rewrite: `edit` changes the cache on disk,
  // then manifest.json lists `rel` with `bytes`' size and sha256 and READY
  // names the new manifest. Returns the new digest.
  std::string Rewrite(const std::string& rel, const std::string& bytes,
                      const std::function<void(const fs::path&)>& edit) {
    const fs::path pub = core::Layout(root_).Published(fp_);
    auto m = core::ParseManifest(ReadFile(pub / "manifest.json"));
    EXPECT_TRUE(m.ok()) << m.status();
    for (auto& f : m->files) {
      if (f.path == rel) {
        f.size = bytes.size();
        f.sha256 = core::Sha256Hex(bytes);
      }
    }
    core::FinalizeManifest(&*m);
    edit(pub / rel);
    const std::string text = core::ManifestToJson(*m);
    testing::WriteFile(pub / "manifest.json", text);
    testing::WriteFile(pub / "READY", core::Sha256Hex(text) + "\n");
    return core::Sha256Hex(text);
  }

  // Runs the gate in both modes at levels Manifest to TargetArch on the
  // cache as it is (not quarantined, so every run sees it) and expects each
  // to be refused at once (no sleep) as corruption naming `want`.
  void ExpectRefusedEverywhere(const std::string& want) {
    opts_.quarantine = false;
    opts_.view_prefix = std::string(core::kDefaultView);
    for (auto mode : {core::ConsumeMode::kShared, core::ConsumeMode::kCopy}) {
      for (auto level : {core::Level::kManifest, core::Level::kFingerprint, core::Level::kChecksums,
                         core::Level::kTargetArch}) {
        opts_.mode = mode;
        opts_.verify = level;
        sleeps_.clear();
        core::GateReport rep;
        auto r = Wait(opts_, deps_, &rep);
        const std::string where =
            std::string(mode == core::ConsumeMode::kCopy ? "Copy" : "Shared") + " at " +
            std::string(core::LevelName(level));
        ASSERT_FALSE(r.ok()) << where;
        EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << where << ": " << r.status();
        EXPECT_NE(r.status().message().find(want), std::string::npos)
            << where << ": " << r.status();
        EXPECT_TRUE(sleeps_.empty()) << where << ": waited instead of refusing at once";
        EXPECT_EQ(rep.reason, "Quarantined") << where;
        EXPECT_FALSE(Exists(view_)) << where;
      }
    }
  }

  testing::ScratchDir dir_;
  fs::path root_, view_;
  std::string fp_;
  FakeResolver resolver_;
  FakeProber prober_;
  WaitDeps deps_;
  WaitOptions opts_;
  std::int64_t now_ms_ = 0;
  std::vector<std::int64_t> sleeps_;
  std::vector<std::string> logs_;
  std::function<void(int)> on_sleep_;
};

TEST(WaitPure, Backoff) {
  std::vector<std::int64_t> got;
  for (int i = 0; i < 7; ++i) got.push_back(NextPollDelayMs(i, 1000, 15000));
  EXPECT_EQ(got, (std::vector<std::int64_t>{1000, 2000, 4000, 8000, 15000, 15000, 15000}));
}

TEST_F(WaitTest, ReadyAtOnceBuildsSharedView) {
  Publish();
  auto r = Wait(opts_, deps_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::GateOutcome::kWarm);
  // The view is a layered tree in the local directory whose files read the
  // published ones in place.
  const fs::path published = core::Layout(root_).Published(fp_);
  const fs::path target = fs::read_symlink(view_);
  EXPECT_EQ(target, r->target);
  EXPECT_EQ(target.parent_path(), view_.parent_path() / "local");
  EXPECT_EQ(target.filename().string().rfind("layered-" + fp_ + "-", 0), 0u) << target;
  EXPECT_EQ(ReadFile(view_ / "manifest.json"), ReadFile(published / "manifest.json"));
  EXPECT_TRUE(sleeps_.empty());
  EXPECT_EQ(resolver_.last_query, "ml/llama/gpu-1");
}

// Shared and SharedReadWrite: what a framework writes after the gate lands
// in the pod's local tree, never in the published directory.
// SharedReadWrite behaves as Shared and logs that it is deprecated.
TEST_F(WaitTest, SharedViewsTakeNewEntriesLocally) {
  Publish();
  const fs::path published = core::Layout(root_).Published(fp_);
  for (core::ConsumeMode mode : {core::ConsumeMode::kShared, core::ConsumeMode::kSharedReadWrite}) {
    logs_.clear();
    opts_.mode = mode;
    auto r = Wait(opts_, deps_);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->outcome, core::GateOutcome::kWarm);
    testing::WriteFile(view_ / "triton" / "newhash" / "k.cubin", "x");
    EXPECT_EQ(ReadFile(view_ / "triton" / "newhash" / "k.cubin"), "x");
    EXPECT_FALSE(Exists(published / "triton" / "newhash"));
    bool warned = false;
    for (const auto& l : logs_) warned |= l.find("SharedReadWrite is deprecated") != l.npos;
    EXPECT_EQ(warned, mode == core::ConsumeMode::kSharedReadWrite);
  }
}

// A gate run again in the same pod logs what the pod compiled after the
// earlier gate (one line per miss), then builds a fresh view.
TEST_F(WaitTest, ARunAgainLogsWhatThePodCompiledAfterTheEarlierGate) {
  Publish();
  for (core::ConsumeMode mode : {core::ConsumeMode::kShared, core::ConsumeMode::kCopy}) {
    opts_.mode = mode;
    ASSERT_TRUE(Wait(opts_, deps_).ok());
    testing::WriteFile(view_ / "triton" / "NEWHASH" / "k_768.json",
                       R"({"name":"k_768","num_warps":4,"num_stages":2})");
    testing::WriteFile(view_ / "triton" / "NEWHASH" / "k_768.cubin", "x");
    logs_.clear();
    auto r = Wait(opts_, deps_);
    ASSERT_TRUE(r.ok()) << r.status();
    int lines = 0;
    for (const auto& l : logs_) {
      if (l.starts_with("before this run the pod compiled: runtime miss: triton kernel k_768 "
                        "num_warps=4 num_stages=2 (NEWHASH, 2 files,")) {
        ++lines;
      }
    }
    EXPECT_EQ(lines, 1) << core::ConsumeModeName(mode) << ": " << ::testing::PrintToString(logs_);
    EXPECT_FALSE(Exists(view_ / "triton" / "NEWHASH")) << "the new view is fresh";
    logs_.clear();
    ASSERT_TRUE(Wait(opts_, deps_).ok());
    for (const auto& l : logs_) EXPECT_EQ(l.find("before this run"), l.npos) << l;
  }
}

TEST_F(WaitTest, PollsWithBackoffUntilReadyAndLogsWhy) {
  on_sleep_ = [this](int n) {
    if (n == 5) Publish();
  };
  opts_.log_every_s = 5;
  auto r = Wait(opts_, deps_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::GateOutcome::kWarm);
  EXPECT_EQ(sleeps_, (std::vector<std::int64_t>{1000, 2000, 4000, 8000, 15000}));
  ASSERT_FALSE(logs_.empty());
  EXPECT_NE(logs_[0].find("warmup Job kc-warm-1 running for 2m"), std::string::npos) << logs_[0];
  EXPECT_NE(logs_[0].find(fp_), std::string::npos);
  EXPECT_LT(logs_.size(), sleeps_.size() + 1);  // not one line per poll
}

TEST_F(WaitTest, TimeoutFails) {
  resolver_.answer.message = "no warmup scheduled for fingerprint: no eligible node";
  auto r = Wait(opts_, deps_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("no eligible node"), std::string::npos) << r.status();
  EXPECT_GE(now_ms_, 60000);
  EXPECT_LE(now_ms_, 60000 + 1);
  EXPECT_FALSE(Exists(view_));
}

TEST_F(WaitTest, TimeoutStartsColdWithEmptyView) {
  opts_.start_cold_on_timeout = true;
  auto r = Wait(opts_, deps_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::GateOutcome::kCold);
  fs::path target = fs::read_symlink(view_);
  EXPECT_TRUE(fs::is_directory(target / "triton"));
  EXPECT_TRUE(fs::is_empty(target / "triton"));
}

TEST_F(WaitTest, WarmupFailedEndsTheWait) {
  resolver_.answer.state = core::ResolveState::kFailed;
  resolver_.answer.message = "warmup Job kc-warm-1 failed: BackoffLimitExceeded";
  auto r = Wait(opts_, deps_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("BackoffLimitExceeded"), std::string::npos);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(WaitTest, ProbeDisagreementIsRefused) {
  Publish();
  prober_.facts.driver_version = "570.86.15";
  auto r = Wait(opts_, deps_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("570.86.15"), std::string::npos) << r.status();
  EXPECT_FALSE(Exists(view_));
}

TEST_F(WaitTest, NoGpuSkipsTheCrossCheck) {
  Publish();
  prober_.error = UnavailableError("no NVIDIA GPU visible: test");
  auto r = Wait(opts_, deps_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(logs_.empty());
  EXPECT_NE(logs_[0].find("no NVIDIA GPU visible"), std::string::npos);
}

TEST_F(WaitTest, ResolverDownKeepsWaiting) {
  resolver_.error = UnavailableError("connect: refused");
  opts_.timeout_s = 10;
  auto r = Wait(opts_, deps_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("connect: refused"), std::string::npos);
  EXPECT_GT(resolver_.calls, 2);
}

TEST_F(WaitTest, CopyModeValidatesALocalCopy) {
  Publish();
  opts_.mode = core::ConsumeMode::kCopy;
  opts_.verify = core::Level::kChecksums;
  opts_.view_prefix = std::string(core::kDefaultView);
  auto r = Wait(opts_, deps_);
  ASSERT_TRUE(r.ok()) << r.status();
  fs::path target = fs::read_symlink(view_);
  EXPECT_TRUE(core::IsWithin(view_.parent_path() / "local", target));
  fs::path published = core::Layout(root_).Published(fp_);
  EXPECT_EQ(ReadFile(target / "manifest.json"), ReadFile(published / "manifest.json"));
  // Writes into the copy do not touch the volume.
  testing::WriteFile(view_ / "triton" / "new", "x");
  EXPECT_FALSE(Exists(published / "triton" / "new"));
}

// The Copy-mode view is the pod's own: directories setgid and
// group-writable, files group-writable, so app containers of another uid in
// the cache group may write it (docs/permissions.md); a cold view too.
TEST_F(WaitTest, CopyAndColdViewsAreGroupWritable) {
  auto mode = [](const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0u;
  };
  Publish();
  opts_.mode = core::ConsumeMode::kCopy;
  opts_.view_prefix = std::string(core::kDefaultView);
  auto r = Wait(opts_, deps_);
  ASSERT_TRUE(r.ok()) << r.status();
  const fs::path target = fs::read_symlink(view_);
  size_t files = 0, dirs = 0;
  for (const auto& e : fs::recursive_directory_iterator(target)) {
    if (e.is_symlink()) continue;
    if (e.is_directory()) {
      ++dirs;
      EXPECT_EQ(mode(e.path()), 02775u) << e.path();
    } else if (e.path().parent_path() != target) {  // manifest.json, READY: as sealed
      ++files;
      EXPECT_EQ(mode(e.path()), 0664u) << e.path();
    }
  }
  EXPECT_GT(files, 0u);
  EXPECT_GT(dirs, 0u);
  EXPECT_EQ(mode(target), 02775u);

  opts_.start_cold_on_timeout = true;
  opts_.timeout_s = 1;
  opts_.root = dir_.path() / "empty-volume";
  r = Wait(opts_, deps_);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->outcome, core::GateOutcome::kCold);
  EXPECT_EQ(mode(fs::read_symlink(view_) / "triton"), 02775u);
}

// A bad cache ends the wait at once, and the report names what was
// quarantined (the operator re-warms it), instead of waiting out the
// timeout while status keeps saying Ready.
TEST_F(WaitTest, CorruptCacheIsQuarantinedAndReportedAtOnce) {
  const std::string digest = Publish();
  resolver_.answer.state = core::ResolveState::kReady;
  resolver_.answer.manifest_digest = digest;
  fs::path published = core::Layout(root_).Published(fp_);
  fs::path cubin = published / "triton/H1000ABCDEFGHIJKLMNOPQRSTUVWXYZ234567/kernel_0.cubin";
  std::string c = ReadFile(cubin);
  c[10] ^= 0x40;
  testing::WriteFile(cubin, c);
  opts_.verify = core::Level::kChecksums;
  opts_.view_prefix = std::string(core::kDefaultView);
  opts_.timeout_s = 600;
  core::GateReport rep;
  auto r = Wait(opts_, deps_, &rep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("sha256 mismatch"), std::string::npos) << r.status();
  EXPECT_TRUE(sleeps_.empty());  // not the timeout
  EXPECT_FALSE(Exists(published));
  EXPECT_EQ(rep.outcome, core::GateOutcome::kFailed);
  EXPECT_EQ(rep.reason, "Quarantined");
  ASSERT_EQ(rep.quarantined.size(), 1u);
  EXPECT_EQ(rep.quarantined[0].fingerprint, fp_);
  EXPECT_EQ(rep.quarantined[0].expected_digest, digest);
  EXPECT_EQ(rep.quarantined[0].found_digest, digest);
  EXPECT_EQ(rep.quarantined[0].level, "Checksums");
  EXPECT_TRUE(fs::exists(rep.quarantined[0].moved_to)) << rep.quarantined[0].moved_to;
  // StartCold: the pod starts cold at once, and still reports it.
  Publish();
  opts_.start_cold_on_timeout = true;
  fs::path again = published / "triton/H1000ABCDEFGHIJKLMNOPQRSTUVWXYZ234567/kernel_0.cubin";
  c = ReadFile(again);
  c[10] ^= 0x40;
  testing::WriteFile(again, c);
  resolver_.answer.manifest_digest = "";
  r = Wait(opts_, deps_, &rep);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::GateOutcome::kCold);
  EXPECT_EQ(rep.outcome, core::GateOutcome::kCold);
  EXPECT_EQ(rep.reason, "Quarantined");
  ASSERT_EQ(rep.quarantined.size(), 1u);
}

// The gate's LoadTest runs the package rung too: a package that does not
// load is refused and quarantined like any corrupt cache.
TEST_F(WaitTest, LoadTestRefusesAPackageThatDoesNotLoad) {
  const std::string digest = Publish();
  resolver_.answer.state = core::ResolveState::kReady;
  resolver_.answer.manifest_digest = digest;
  opts_.verify = core::Level::kLoadTest;
  opts_.view_prefix = std::string(core::kDefaultView);
  deps_.check_packages = [](const fs::path&, const core::Manifest&,
                            std::vector<std::string>*) -> std::optional<core::Finding> {
    return core::Finding{core::Level::kLoadTest, "inductor/model.pt2", "built for sm_80"};
  };
  core::GateReport rep;
  auto r = Wait(opts_, deps_, &rep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("inductor/model.pt2"), std::string::npos) << r.status();
  EXPECT_EQ(rep.reason, "Quarantined");
  ASSERT_EQ(rep.quarantined.size(), 1u);
  EXPECT_EQ(rep.quarantined[0].level, "LoadTest");
}

// Tamper evidence: a file, the manifest and READY rewritten consistently
// pass levels 1-3, but not the digest the operator recorded at sealing.
TEST_F(WaitTest, ConsistentRewriteIsRefusedByTheOperatorsDigest) {
  const std::string sealed = Publish();
  const std::string rewritten = Publish(90, "attacker", 3, /*replace=*/true);
  ASSERT_NE(sealed, rewritten);
  resolver_.answer.state = core::ResolveState::kReady;
  resolver_.answer.manifest_digest = sealed;
  opts_.verify = core::Level::kChecksums;
  opts_.view_prefix = std::string(core::kDefaultView);
  opts_.digest_grace_s = 20;
  core::GateReport rep;
  auto r = Wait(opts_, deps_, &rep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("differs from the one the operator recorded"),
            std::string::npos)
      << r.status();
  EXPECT_GE(now_ms_, 20000);  // the grace was given first
  EXPECT_LT(now_ms_, 60000);  // but not the timeout
  EXPECT_FALSE(Exists(view_));
  EXPECT_FALSE(Exists(core::Layout(root_).Published(fp_)));  // quarantined
  ASSERT_EQ(rep.quarantined.size(), 1u);
  EXPECT_EQ(rep.quarantined[0].expected_digest, sealed);
  EXPECT_EQ(rep.quarantined[0].found_digest, rewritten);
}

// A re-warm just sealed (--replace) and the operator records its digest
// moments later: the grace lets the gate use it, nothing is quarantined.
TEST_F(WaitTest, DigestMismatchWaitsForTheOperatorToCatchUp) {
  const std::string old_digest = Publish();
  const std::string fresh = Publish(90, "job-2", 3, /*replace=*/true);
  resolver_.answer.state = core::ResolveState::kReady;
  resolver_.answer.manifest_digest = old_digest;
  on_sleep_ = [&](int n) {
    if (n == 2) resolver_.answer.manifest_digest = fresh;
  };
  core::GateReport rep;
  auto r = Wait(opts_, deps_, &rep);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(rep.outcome, core::GateOutcome::kWarm);
  EXPECT_EQ(rep.manifest_digest, fresh);
  EXPECT_TRUE(rep.quarantined.empty());
  EXPECT_EQ(sleeps_.size(), 2u);
}

const char kCubin[] = "triton/H1000ABCDEFGHIJKLMNOPQRSTUVWXYZ234567/kernel_0.cubin";

// A listed file turned into a symlink to a file of the gate's own container,
// the manifest listing the target's size and sha256: never followed.
TEST_F(WaitTest, ListedFileLinkedOutsideIsRefusedAtEveryLevelAndMode) {
  Publish();
  const fs::path secret = dir_.path() / "gate-own-file";
  testing::WriteFile(secret, "the gate's own bytes");
  Rewrite(kCubin, "the gate's own bytes", [&](const fs::path& p) {
    fs::remove(p);
    fs::create_symlink(secret, p);
  });
  ExpectRefusedEverywhere("is refused: absolute target");
}

// A listed file replaced by a FIFO: refused at once (a plain open would
// block the copy until --timeout).
TEST_F(WaitTest, ListedFifoIsRefusedAtOnceAtEveryLevelAndMode) {
  Publish();
  Rewrite(kCubin, "", [](const fs::path& p) {
    fs::remove(p);
    ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0);
  });
  ExpectRefusedEverywhere("special file (FIFO)");
}

// A size of 10^18 listed for a 2,000-byte file: Manifest compares sizes.
TEST_F(WaitTest, ListedSizeOtherThanOnDiskIsRefusedFromManifestUp) {
  Publish();
  const fs::path pub = core::Layout(root_).Published(fp_);
  auto m = core::ParseManifest(ReadFile(pub / "manifest.json"));
  ASSERT_TRUE(m.ok());
  for (auto& f : m->files) {
    if (f.path == kCubin) f.size = 1000000000000000000ull;
  }
  core::FinalizeManifest(&*m);
  const std::string text = core::ManifestToJson(*m);
  testing::WriteFile(pub / "manifest.json", text);
  testing::WriteFile(pub / "READY", core::Sha256Hex(text) + "\n");
  ExpectRefusedEverywhere("manifest says 1000000000000000000");
}

// READY that is not a digest (100 kB of random bytes, a short line, a FIFO)
// is corruption, refused at once: not "not ready yet", and no digest grace
// even when the operator recorded another digest. A READY that is the
// operator's digest but names a manifest that does not parse is refused at
// once too. (A well-formed READY that is not the operator's digest gets the
// grace and is then refused on its digest alone, its manifest unread:
// initwarm_gate_memory_test.)
TEST_F(WaitTest, GarbageReadyIsRefusedAtOnceAndQuarantined) {
  struct Case {
    std::string name;
    std::function<void(const fs::path& pub)> make;
    std::string want;
    std::string expected;  // the operator's digest; "" = the sealed one
  };
  const Case cases[] = {
      {"100 kB of random bytes",
       [](const fs::path& pub) { testing::WriteFile(pub / "READY", testing::Bytes(100000, 7)); },
       "larger than 4096 bytes", ""},
      {"a short line", [](const fs::path& pub) { testing::WriteFile(pub / "READY", "ready\n"); },
       "does not hold a sha256", ""},
      {"a FIFO",
       [](const fs::path& pub) {
         fs::remove(pub / "READY");
         ASSERT_EQ(::mkfifo((pub / "READY").c_str(), 0644), 0);
       },
       "is a FIFO", ""},
      {"naming a manifest that does not parse",
       [](const fs::path& pub) {
         testing::WriteFile(pub / "manifest.json", "not JSON");
         testing::WriteFile(pub / "READY", core::Sha256Hex("not JSON") + "\n");
       },
       "manifest.json", core::Sha256Hex("not JSON")},
  };
  for (const auto& c : cases) {
    const std::string sealed = Publish(90, "job-1", 2, /*replace=*/true);
    resolver_.answer.state = core::ResolveState::kReady;
    resolver_.answer.manifest_digest = c.expected.empty() ? sealed : c.expected;
    c.make(core::Layout(root_).Published(fp_));
    sleeps_.clear();
    core::GateReport rep;
    auto r = Wait(opts_, deps_, &rep);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << c.name << ": " << r.status();
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << c.name << ": " << r.status();
    EXPECT_TRUE(sleeps_.empty()) << c.name << ": waited instead of refusing at once";
    EXPECT_EQ(rep.reason, "Quarantined") << c.name;
    ASSERT_EQ(rep.quarantined.size(), 1u) << c.name;
    EXPECT_FALSE(rep.quarantined[0].moved_to.empty()) << c.name;
    EXPECT_FALSE(Exists(core::Layout(root_).Published(fp_))) << c.name;
  }
}

// --verify Manifest in Shared mode also checks level 2: a cache published
// under this node's fingerprint directory whose manifest is another
// fingerprint's is refused.
TEST_F(WaitTest, SharedManifestLevelChecksTheFingerprint) {
  Publish();
  core::NodeFacts other = testing::H200Facts();
  other.driver_version = "590.10.01";
  const std::string other_fp = core::ComputeFingerprint(other, testing::TestRuntime()).id;
  fs::rename(core::Layout(root_).Published(fp_), core::Layout(root_).Published(other_fp));
  resolver_.answer.fingerprint = other_fp;
  resolver_.answer.node = other;
  prober_.facts = other;
  opts_.mode = core::ConsumeMode::kShared;
  opts_.verify = core::Level::kManifest;
  core::GateReport rep;
  auto r = Wait(opts_, deps_, &rep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("Fingerprint"), std::string::npos) << r.status();
  ASSERT_EQ(rep.quarantined.size(), 1u);
  EXPECT_EQ(rep.quarantined[0].level, "Fingerprint");
}

// The operator's answer is final (invalid spec, node not selected): the
// gate stops at once instead of waiting out its timeout.
TEST_F(WaitTest, FinalAnswerEndsTheWaitAtOnce) {
  resolver_.answer.state = core::ResolveState::kUnknown;
  resolver_.answer.final = true;
  resolver_.answer.reason = "NodeNotSelected";
  resolver_.answer.message = "node gpu-1 does not match the KernelCache's nodeSelector (a=b)";
  core::GateReport rep;
  auto r = Wait(opts_, deps_, &rep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("NodeNotSelected"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("nodeSelector"), std::string::npos) << r.status();
  EXPECT_TRUE(sleeps_.empty());
  EXPECT_EQ(rep.outcome, core::GateOutcome::kFailed);
  EXPECT_EQ(rep.reason, "NodeNotSelected");
  // StartCold: exits with a cold view, at once.
  opts_.start_cold_on_timeout = true;
  resolver_.answer.fingerprint = "";  // no fingerprint for this node at all
  resolver_.answer.reason = "InvalidSpec";
  r = Wait(opts_, deps_, &rep);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::GateOutcome::kCold);
  EXPECT_TRUE(sleeps_.empty());
  EXPECT_TRUE(fs::is_empty(fs::read_symlink(view_) / "triton"));
  EXPECT_EQ(rep.outcome, core::GateOutcome::kCold);
  EXPECT_EQ(rep.reason, "InvalidSpec");
}

// A full GPU pool: the operator says the warmup cannot be scheduled.
// StartCold pods start cold at once (no waiting out the timeout); Fail pods
// keep waiting for it.
TEST_F(WaitTest, UnschedulableWarmupStartsColdAtOnceOnlyUnderStartCold) {
  resolver_.answer.start_cold = true;
  resolver_.answer.reason = "WarmupUnschedulable";
  resolver_.answer.message =
      "warmup pod p of Job llama-warm-x has been unschedulable for 3m: 0/1 nodes are available: "
      "1 Insufficient nvidia.com/gpu.";
  opts_.timeout_s = 600;
  opts_.start_cold_on_timeout = true;
  core::GateReport rep;
  auto r = Wait(opts_, deps_, &rep);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::GateOutcome::kCold);
  EXPECT_TRUE(sleeps_.empty()) << "a StartCold pod must not wait out its timeout";
  EXPECT_TRUE(fs::is_empty(fs::read_symlink(view_) / "triton"));
  EXPECT_EQ(rep.outcome, core::GateOutcome::kCold);
  EXPECT_EQ(rep.reason, "WarmupUnschedulable");
  EXPECT_NE(rep.message.find("Insufficient nvidia.com/gpu"), std::string::npos) << rep.message;
  bool logged = false;
  for (const auto& l : logs_)
    logged |= l.find("not waiting: ") != std::string::npos &&
              l.find("WarmupUnschedulable") != std::string::npos;
  EXPECT_TRUE(logged) << "the cold start's reason is logged";

  // A cache already on the volume is still used: startCold is no reason to
  // skip a valid cache.
  Publish();
  r = Wait(opts_, deps_, &rep);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, core::GateOutcome::kWarm);

  // onTimeout Fail: keeps waiting the whole timeout.
  std::filesystem::remove_all(root_);
  sleeps_.clear();
  opts_.start_cold_on_timeout = false;
  opts_.timeout_s = 60;
  r = Wait(opts_, deps_, &rep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_FALSE(sleeps_.empty());
  EXPECT_GT(resolver_.calls, 3);
  EXPECT_EQ(rep.reason, "Timeout");
}

TEST_F(WaitTest, ReadyStateButNoReadyFileSaysWhy) {
  resolver_.answer.state = core::ResolveState::kReady;
  opts_.timeout_s = 3;
  auto r = Wait(opts_, deps_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is the cache volume mounted at --root?"), std::string::npos)
      << r.status();
}

TEST_F(WaitTest, FixedFingerprintWithoutResolver) {
  Publish();
  deps_.resolver = nullptr;
  opts_.fingerprint = fp_;
  auto r = Wait(opts_, deps_);
  ASSERT_TRUE(r.ok()) << r.status();
  deps_.resolver = nullptr;
  opts_.fingerprint = "";
  EXPECT_EQ(Wait(opts_, deps_).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kc::initwarm
