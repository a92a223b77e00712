// The wait's steps alone (wait_loop.h): each takes the loop state and one
// input, and says what the round does next. Wait's end-to-end behaviour is
// in wait_test.cc.
#include "initwarm/gate/wait_loop.h"

#include <gtest/gtest.h>

#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

const std::string kFp = "0123456789abcdef";
const std::string kDigestA(64, 'a');
const std::string kDigestB(64, 'b');

WaitOptions Options() {
  WaitOptions o;
  o.root = "/vol";
  o.node = "gpu-1";
  o.timeout_s = 60;
  o.log_every_s = 10;
  o.digest_grace_s = 30;
  o.poll_initial_ms = 1000;
  o.poll_max_ms = 15000;
  return o;
}

ResolveAnswer Answer(core::ResolveState state) {
  ResolveAnswer a;
  a.fingerprint = kFp;
  a.state = state;
  a.manifest_digest = kDigestA;
  a.message = "warmup running";
  a.node = testing::H200Facts();
  return a;
}

TEST(WaitLoop, StartWait) {
  WaitOptions o = Options();
  WaitLoop w = StartWait(o, /*has_prober=*/true, 5000);
  EXPECT_EQ(w.start, 5000);
  EXPECT_EQ(w.deadline, 65000);
  EXPECT_EQ(w.state, core::ResolveState::kUnknown);
  EXPECT_FALSE(w.cross_checked);
  EXPECT_EQ(w.last_log, -5000);  // the first round logs
  EXPECT_EQ(w.reason, "waiting for the first answer");
  o.fingerprint = kFp;
  w = StartWait(o, /*has_prober=*/false, 0);
  EXPECT_EQ(w.fp, kFp);
  EXPECT_EQ(w.state, core::ResolveState::kPending);
  EXPECT_TRUE(w.cross_checked);
}

TEST(WaitLoop, ApplyAnswer) {
  const WaitOptions o = Options();
  struct Case {
    const char* name;
    StatusOr<ResolveAnswer> answer;
    std::string reason, final_reason, start_cold_reason;
    bool failed;
  };
  ResolveAnswer final_answer = Answer(core::ResolveState::kUnknown);
  final_answer.fingerprint = "";
  final_answer.final = true;
  ResolveAnswer not_selected = final_answer;
  not_selected.reason = "NodeNotSelected";
  ResolveAnswer cold = Answer(core::ResolveState::kPending);
  cold.start_cold = true;
  cold.message = "";
  Case cases[] = {
      {"down", UnavailableError("refused"), "operator resolve endpoint: Unavailable: refused", "",
       "", false},
      {"warming", Answer(core::ResolveState::kWarming), "warmup running", "", "", false},
      {"failed", Answer(core::ResolveState::kFailed), "warmup running", "", "", true},
      {"final", final_answer, "warmup running", "InvalidSpec", "", false},
      {"final with reason", not_selected, "warmup running", "NodeNotSelected", "", false},
      {"start cold", cold, "state Pending", "", "WarmupUnschedulable", false},
  };
  for (const auto& c : cases) {
    WaitLoop w = StartWait(o, true, 0);
    ASSERT_TRUE(ApplyAnswer(o, c.answer, &w).ok()) << c.name;
    EXPECT_EQ(w.reason.rfind(c.reason, 0), 0u) << c.name << ": " << w.reason;
    EXPECT_EQ(w.final_reason, c.final_reason) << c.name;
    EXPECT_EQ(w.start_cold_reason, c.start_cold_reason) << c.name;
    EXPECT_EQ(w.failed, c.failed) << c.name;
  }
  WaitLoop w = StartWait(o, true, 0);
  ASSERT_TRUE(ApplyAnswer(o, Answer(core::ResolveState::kReady), &w).ok());
  EXPECT_EQ(w.fp, kFp);
  EXPECT_EQ(w.expected_digest, kDigestA);
  EXPECT_EQ(w.node, testing::H200Facts());
  EXPECT_EQ(w.state, core::ResolveState::kReady);
  // A later answer without startCold clears it.
  ASSERT_TRUE(ApplyAnswer(o, cold, &w).ok());
  ASSERT_TRUE(ApplyAnswer(o, Answer(core::ResolveState::kWarming), &w).ok());
  EXPECT_TRUE(w.start_cold_reason.empty());
}

TEST(WaitLoop, ApplyAnswerRefusesAnotherFingerprint) {
  WaitOptions o = Options();
  o.fingerprint = "fedcba9876543210";
  WaitLoop w = StartWait(o, true, 0);
  Status s = ApplyAnswer(o, Answer(core::ResolveState::kReady), &w);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("resolves node gpu-1 to fingerprint " + kFp +
                             " but --fingerprint is fedcba9876543210"),
            std::string::npos)
      << s;
}

TEST(WaitLoop, CrossCheck) {
  const WaitOptions o = Options();
  const ResolveAnswer ans = Answer(core::ResolveState::kWarming);
  WaitLoop w = StartWait(o, true, 0);
  EXPECT_FALSE(NeedsCrossCheck(w, ans));  // no fingerprint yet
  ASSERT_TRUE(ApplyAnswer(o, ans, &w).ok());
  EXPECT_TRUE(NeedsCrossCheck(w, ans));
  ResolveAnswer final_answer = ans;
  final_answer.final = true;
  EXPECT_FALSE(NeedsCrossCheck(w, final_answer));

  std::string note;
  WaitLoop agree = w;
  ASSERT_TRUE(CrossCheck(o, ans, ProbeResult{testing::H200Facts(), "nvml"}, &agree, &note).ok());
  EXPECT_TRUE(agree.cross_checked);
  EXPECT_TRUE(note.empty());
  EXPECT_FALSE(NeedsCrossCheck(agree, ans));

  WaitLoop no_gpu = w;
  ASSERT_TRUE(CrossCheck(o, ans, UnavailableError("no NVML"), &no_gpu, &note).ok());
  EXPECT_TRUE(no_gpu.cross_checked);
  EXPECT_EQ(note, "no local cross-check of the fingerprint: no NVML");

  core::NodeFacts other = testing::H200Facts();
  other.gpu_product = "NVIDIA-A100";
  WaitLoop disagree = w;
  Status s = CrossCheck(o, ans, ProbeResult{other, "nvml"}, &disagree, &note);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("fingerprint disagreement"), std::string::npos) << s;
  EXPECT_NE(s.message().find("NVIDIA-A100"), std::string::npos) << s;
}

ReadyState Ready(ReadyState::Kind kind, const std::string& digest = "") {
  ReadyState r;
  r.kind = kind;
  r.digest = digest;
  return r;
}

TEST(WaitLoop, CheckReady) {
  const WaitOptions o = Options();
  WaitLoop w = StartWait(o, true, 0);
  ASSERT_TRUE(ApplyAnswer(o, Answer(core::ResolveState::kWarming), &w).ok());
  EXPECT_FALSE(CheckReady(o, Ready(ReadyState::kAbsent), 0, &w));
  EXPECT_EQ(w.reason, "warmup running");
  EXPECT_TRUE(CheckReady(o, Ready(ReadyState::kCorrupt), 0, &w));
  EXPECT_TRUE(CheckReady(o, Ready(ReadyState::kDigest, kDigestA), 0, &w));

  // Ready by the operator, nothing on the volume: says so.
  w.state = core::ResolveState::kReady;
  EXPECT_FALSE(CheckReady(o, Ready(ReadyState::kAbsent), 0, &w));
  EXPECT_NE(w.reason.find("Ready but /vol/v1/" + kFp + "/READY is missing"), std::string::npos)
      << w.reason;

  // Another digest: the grace, then refused.
  EXPECT_FALSE(CheckReady(o, Ready(ReadyState::kDigest, kDigestB), 1000, &w));
  EXPECT_EQ(w.digest_mismatch_since, 1000);
  EXPECT_NE(w.reason.find("holds digest bbbbbbbbbbbb..., the operator recorded aaaaaaaaaaaa"),
            std::string::npos)
      << w.reason;
  EXPECT_FALSE(CheckReady(o, Ready(ReadyState::kDigest, kDigestB), 30999, &w));
  EXPECT_TRUE(CheckReady(o, Ready(ReadyState::kDigest, kDigestB), 31000, &w));
  // The operator catching up ends the grace.
  EXPECT_TRUE(CheckReady(o, Ready(ReadyState::kDigest, kDigestA), 32000, &w));
  EXPECT_EQ(w.digest_mismatch_since, -1);
  // Without a recorded digest any well-formed READY is tried.
  w.expected_digest.clear();
  EXPECT_TRUE(CheckReady(o, Ready(ReadyState::kDigest, kDigestB), 0, &w));
}

TEST(WaitLoop, WarmResultFillsTheReport) {
  WaitOptions o = Options();
  o.verify = core::Level::kChecksums;
  WaitLoop w = StartWait(o, true, 1000);
  w.fp = kFp;
  core::GateReport rep;
  WaitResult r = WarmResult(o, w, "/run/local/shared-x", kDigestA, 4000, &rep);
  EXPECT_EQ(r.outcome, core::GateOutcome::kWarm);
  EXPECT_EQ(r.reason, "validated up to Checksums");
  EXPECT_EQ(r.waited_ms, 3000);
  EXPECT_EQ(rep.outcome, core::GateOutcome::kWarm);
  EXPECT_EQ(rep.reason, core::gate_reason::kValidated);
  EXPECT_EQ(rep.fingerprint, kFp);
  EXPECT_EQ(rep.manifest_digest, kDigestA);
  EXPECT_EQ(rep.target, "/run/local/shared-x");
  EXPECT_EQ(rep.waited_ms, 3000);
}

TEST(WaitLoop, Decide) {
  WaitOptions o = Options();
  const WaitLoop w = StartWait(o, true, 0);
  struct Case {
    const char* name;
    void (*edit)(WaitLoop&);
    bool start_cold_on_timeout;
    std::int64_t now;
    WaitNext want;
  } cases[] = {
      {"waiting", [](WaitLoop&) {}, false, 1000, WaitNext::kPoll},
      {"deadline", [](WaitLoop&) {}, false, 60000, WaitNext::kEnd},
      {"failed", [](WaitLoop& l) { l.failed = true; }, false, 0, WaitNext::kEnd},
      {"quarantined", [](WaitLoop& l) { l.found = core::GateQuarantine{}; }, false, 0,
       WaitNext::kEnd},
      {"start cold under Fail", [](WaitLoop& l) { l.start_cold_reason = "X"; }, false, 0,
       WaitNext::kPoll},
      {"start cold under StartCold", [](WaitLoop& l) { l.start_cold_reason = "X"; }, true, 0,
       WaitNext::kEnd},
  };
  for (const auto& c : cases) {
    WaitLoop l = w;
    c.edit(l);
    o.start_cold_on_timeout = c.start_cold_on_timeout;
    EXPECT_EQ(Decide(o, l, c.now), c.want) << c.name;
  }
}

TEST(WaitLoop, ProgressLineEveryLogInterval) {
  const WaitOptions o = Options();
  WaitLoop w = StartWait(o, true, 0);
  auto first = ProgressLine(o, 0, &w);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first,
            "waiting 0s for this node's fingerprint (Unknown): waiting for the first answer");
  EXPECT_FALSE(ProgressLine(o, 9999, &w).has_value());
  w.fp = kFp;
  w.reason = "warmup running";
  auto later = ProgressLine(o, 70000, &w);
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(*later, "waiting 1m10s for fingerprint " + kFp + " (Unknown): warmup running");
  EXPECT_EQ(w.last_log, 70000);
}

TEST(WaitLoop, PollDelayNeverPassesTheDeadline) {
  const WaitOptions o = Options();
  const WaitLoop w = StartWait(o, true, 0);
  EXPECT_EQ(PollDelayMs(o, 0, w, 0), 1000);
  EXPECT_EQ(PollDelayMs(o, 2, w, 0), 4000);
  EXPECT_EQ(PollDelayMs(o, 10, w, 0), 15000);
  EXPECT_EQ(PollDelayMs(o, 10, w, 59000), 1000);
  EXPECT_EQ(PollDelayMs(o, 10, w, 60000), 1);
}

TEST(WaitLoop, ConcludeWithoutCache) {
  WaitOptions o = Options();
  WaitLoop w = StartWait(o, true, 0);
  w.fp = kFp;
  w.reason = "warmup running";

  WaitEnd end = ConcludeWithoutCache(o, w, 60000);
  EXPECT_EQ(end.status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(end.status.message(),
            "timed out after 1m waiting for fingerprint " + kFp + ": warmup running");
  EXPECT_EQ(end.reason, core::gate_reason::kTimeout);
  EXPECT_FALSE(end.start_cold_now);

  WaitLoop earlier = w;
  earlier.validation_failure = "cache failed validation";
  EXPECT_NE(ConcludeWithoutCache(o, earlier, 60000)
                .status.message()
                .find("(earlier: cache failed validation)"),
            std::string::npos);

  WaitLoop failed = w;
  failed.failed = true;
  end = ConcludeWithoutCache(o, failed, 1000);
  EXPECT_EQ(end.status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(end.status.message().rfind("warmup failed waiting for", 0), 0u);
  EXPECT_EQ(end.reason, core::gate_reason::kWarmupFailed);

  WaitLoop found = w;
  found.found = core::GateQuarantine{};
  end = ConcludeWithoutCache(o, found, 0);
  EXPECT_EQ(end.status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(end.reason, core::gate_reason::kQuarantined);

  WaitLoop cold = w;
  cold.start_cold_reason = "WarmupUnschedulable";
  EXPECT_EQ(ConcludeWithoutCache(o, cold, 0).status.code(), StatusCode::kDeadlineExceeded);
  o.start_cold_on_timeout = true;
  end = ConcludeWithoutCache(o, cold, 0);
  EXPECT_EQ(end.status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(end.reason, "WarmupUnschedulable");
  EXPECT_TRUE(end.start_cold_now);

  WaitLoop final_answer = found;  // a final answer wins over all else
  final_answer.final_reason = "NodeNotSelected";
  end = ConcludeWithoutCache(o, final_answer, 0);
  EXPECT_EQ(end.status.code(), StatusCode::kNotFound);
  EXPECT_EQ(end.status.message(),
            "the operator says this pod gets no cache (NodeNotSelected): warmup running");
  EXPECT_EQ(end.reason, "NodeNotSelected");
}

}  // namespace
}  // namespace kc::initwarm
