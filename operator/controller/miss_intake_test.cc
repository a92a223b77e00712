#include "operator/controller/miss_intake.h"

#include <gtest/gtest.h>

#include <future>

#include "core/gate_report.h"
#include "core/miss_channel.h"
#include "operator/testing/objects.h"

namespace kc::op {
namespace {

constexpr char kFp[] = "0123456789abcdef";
const std::string kDigest(64, 'a');
const Time kNow = Time{} + std::chrono::seconds(1'800'000'000);
constexpr std::int64_t kExp = 1'800'003'600;
const std::string kToken = fixtures::PodTokenJwt(fixtures::PodTokenClaims("ml", "p1", "u1", kExp));

Json Review(bool authenticated, const Json& user, const Json& audiences = {"kernelcache.io"}) {
  return {{"status", {{"authenticated", authenticated}, {"user", user}, {"audiences", audiences}}}};
}
Json PodUser(const std::string& ns = "ml", const std::string& pod = "p1",
             const std::string& uid = "u1") {
  return {{"username", "system:serviceaccount:" + ns + ":default"},
          {"extra", {{core::kPodNameExtra, {pod}}, {core::kPodUidExtra, {uid}}}}};
}

Json GatedPod(core::GateOutcome outcome, const std::string& fp = kFp, const std::string& uid = "u1",
              const std::string& consumer = "llama") {
  core::GateReport g;
  g.outcome = outcome;
  g.reason = "Validated";
  g.fingerprint = fp;
  g.manifest_digest = kDigest;
  Json labels = Json::object();
  if (!consumer.empty()) labels[core::kConsumerLabel] = consumer;
  return {
      {"metadata", {{"name", "p1"}, {"namespace", "ml"}, {"uid", uid}, {"labels", labels}}},
      {"spec", {{"nodeName", "gpu-1"}}},
      {"status",
       {{"initContainerStatuses",
         {{{"name", core::kGateContainer},
           {"state", {{"terminated", {{"exitCode", 0}, {"message", GateReportToJson(g)}}}}}}}}}}};
}

core::MissReport Report(const std::string& fp = kFp) {
  return {fp, {{core::MissFramework::kTriton, "K", "kernel add_kernel", 8, 100}}};
}

TEST(MissIntake, BearerTokenNeedsTheScheme) {
  EXPECT_EQ(*BearerToken("Bearer abc"), "abc");
  for (const char* bad : {"", "Bearer ", "Basic abc", "bearer abc", "abc"}) {
    EXPECT_EQ(BearerToken(bad).status().code(), StatusCode::kUnauthenticated) << bad;
  }
}

TEST(MissIntake, TokenReviewRequestAsksForOurAudience) {
  Json r = TokenReviewRequest("t");
  EXPECT_EQ(r["kind"], "TokenReview");
  EXPECT_EQ(r["spec"]["token"], "t");
  EXPECT_EQ(r["spec"]["audiences"], Json::array({core::kMissTokenAudience}));
}

TEST(MissIntake, IdentityFromTokenReviewTable) {
  struct Case {
    const char* name;
    Json review;
    StatusCode want;
  };
  Json no_uid = PodUser();
  no_uid["extra"].erase(core::kPodUidExtra);
  Json user_token = {{"username", "alice"}};
  Json bad_ns = PodUser();
  bad_ns["username"] = "system:serviceaccount:";
  const std::vector<Case> cases = {
      {"a pod's token", Review(true, PodUser()), StatusCode::kOk},
      {"not authenticated", Review(false, PodUser()), StatusCode::kUnauthenticated},
      {"another audience", Review(true, PodUser(), {"api"}), StatusCode::kUnauthenticated},
      {"no status", Json::object(), StatusCode::kUnauthenticated},
      {"not an object", Json::array(), StatusCode::kUnauthenticated},
      {"no pod uid", Review(true, no_uid), StatusCode::kPermissionDenied},
      {"a user's token", Review(true, user_token), StatusCode::kPermissionDenied},
      {"no namespace", Review(true, bad_ns), StatusCode::kPermissionDenied},
      {"user not an object", Review(true, "x"), StatusCode::kPermissionDenied},
  };
  for (const Case& c : cases) {
    auto id = IdentityFromTokenReview(c.review);
    EXPECT_EQ(id.status().code(), c.want) << c.name << ": " << id.status().message();
  }
  EXPECT_EQ(*IdentityFromTokenReview(Review(true, PodUser("ns2", "pod-9", "uid-9"))),
            (TokenIdentity{"ns2", "pod-9", "uid-9"}));
}

TEST(MissIntake, SourceIsThePodsGateNeverTheBody) {
  const TokenIdentity id{"ml", "p1", "u1"};
  auto src = SourceFromGatedPod(id, GatedPod(core::GateOutcome::kWarm), Report());
  ASSERT_TRUE(src.ok()) << src.status().message();
  EXPECT_EQ(src->kernelcache, "llama");
  EXPECT_EQ(src->fingerprint, kFp);
  EXPECT_EQ(src->manifest_digest, kDigest);
  EXPECT_EQ(src->pod_uid, "u1");

  struct Case {
    const char* name;
    std::optional<Json> pod;
    core::MissReport report;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"unknown pod", std::nullopt, Report(), "not a gated pod"},
      {"another uid", GatedPod(core::GateOutcome::kWarm, kFp, "u2"), Report(), "another uid"},
      {"no consumer label", GatedPod(core::GateOutcome::kWarm, kFp, "u1", ""), Report(),
       "no label"},
      {"gate went Cold", GatedPod(core::GateOutcome::kCold), Report(), "not reported Warm"},
      {"gate failed", GatedPod(core::GateOutcome::kFailed), Report(), "not reported Warm"},
      {"another fingerprint", GatedPod(core::GateOutcome::kWarm), Report("fedcba9876543210"),
       "is not the one"},
  };
  for (const Case& c : cases) {
    auto s = SourceFromGatedPod(id, c.pod, c.report);
    EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied) << c.name;
    EXPECT_NE(s.status().message().find(c.says), std::string::npos)
        << c.name << ": " << s.status().message();
  }
}

Json KernelCacheWith(const std::string& fp, const std::string& digest) {
  return {{"metadata", {{"name", "llama"}, {"namespace", "ml"}}},
          {"status", {{"fingerprints", {{{"id", fp}, {"manifestDigest", digest}}}}}}};
}

struct Harness {
  MissLedger ledger;
  TokenReviewCache reviews;
  Json review = Review(true, PodUser());
  bool review_fails = false;
  int review_calls = 0;
  std::function<void()> on_review;  // runs inside each review
  std::optional<Json> pod = GatedPod(core::GateOutcome::kWarm);
  std::optional<Json> kernelcache = KernelCacheWith(kFp, kDigest);
  std::vector<MissRecord> records;
  bool leading = true;
  MissIntake intake() {
    MissIntake in;
    in.review = [this](const Json& req) -> StatusOr<Json> {
      ++review_calls;
      if (on_review) on_review();
      if (review_fails) return UnavailableError("connection refused");
      EXPECT_EQ(req["spec"]["token"], kToken);
      return review;
    };
    in.reviews = &reviews;
    in.gated_pod = [this](const std::string& ns, const std::string& name) -> std::optional<Json> {
      if (ns != "ml" || name != "p1") return std::nullopt;
      return pod;
    };
    in.kernelcache = [this](const std::string& ns, const std::string& name) -> std::optional<Json> {
      if (ns != "ml" || name != "llama") return std::nullopt;
      return kernelcache;
    };
    in.ledger = &ledger;
    in.on_record = [this](const MissSource&, const MissRecord& r) { records.push_back(r); };
    in.now = [] { return kNow; };
    in.leading = [this] { return leading; };
    return in;
  }
};

HttpRequest Post(const std::string& body, const std::string& auth = "Bearer " + kToken) {
  HttpRequest r;
  r.method = "POST";
  r.path = core::kMissReportPath;
  r.body = body;
  r.authorization = auth;
  return r;
}

std::string BearerFor(const Json& claims) { return "Bearer " + fixtures::PodTokenJwt(claims); }

TEST(MissIntake, HandlerAnswersEachRefusalWithItsCode) {
  const std::string good = core::MissReportToJson(Report());
  struct Case {
    const char* name;
    std::function<void(Harness&)> setup;
    HttpRequest req;
    int want;
  };
  const std::vector<Case> cases = {
      {"accepted", [](Harness&) {}, Post(good), 200},
      {"no token", [](Harness&) {}, Post(good, ""), 401},
      {"review unavailable", [](Harness& h) { h.review_fails = true; }, Post(good), 503},
      {"not authenticated", [](Harness& h) { h.review = Review(false, PodUser()); }, Post(good),
       401},
      {"pod not gated", [](Harness& h) { h.pod.reset(); }, Post(good), 403},
      {"not a report", [](Harness&) {}, Post("{\"fingerprint\":7}"), 400},
      {"garbage", [](Harness&) {}, Post("\x01\x02"), 400},
      {"too large", [](Harness&) {}, Post(std::string(core::kMaxMissReportBytes + 1, ' ')), 413},
      {"not the leader", [](Harness& h) { h.leading = false; }, Post(good), 503},
      {"relabelled to a KernelCache that does not exist", [](Harness& h) { h.kernelcache.reset(); },
       Post(good), 403},
      {"fingerprint not in the KernelCache's status",
       [](Harness& h) { h.kernelcache = KernelCacheWith("fedcba9876543210", kDigest); }, Post(good),
       403},
      {"another digest in the KernelCache's status",
       [](Harness& h) { h.kernelcache = KernelCacheWith(kFp, std::string(64, 'b')); }, Post(good),
       403},
      {"no digest recorded yet", [](Harness& h) { h.kernelcache = KernelCacheWith(kFp, ""); },
       Post(good), 403},
      {"claims name another pod than the review",
       [](Harness& h) { h.review = Review(true, PodUser("ml", "p1", "u-other")); }, Post(good),
       401},
  };
  for (const Case& c : cases) {
    Harness h;
    c.setup(h);
    HttpResponse r = HandleMissReport(c.req, h.intake());
    EXPECT_EQ(r.status, c.want) << c.name << ": " << r.body;
    EXPECT_TRUE(Json::parse(r.body).is_object()) << c.name;
    EXPECT_EQ(h.records.size(), c.want == 200 ? 1u : 0u) << c.name;
  }
}

TEST(MissIntake, JunkTokensAreRefusedBeforeAnyApiCall) {
  const std::string good = core::MissReportToJson(Report());
  Json other_aud = fixtures::PodTokenClaims("ml", "p1", "u1", kExp);
  other_aud["aud"] = Json::array({"https://kubernetes.default.svc"});
  struct Case {
    const char* name;
    std::string auth;
    int want;
  };
  const std::vector<Case> cases = {
      {"not a JWT", "Bearer tok", 401},
      {"another audience", BearerFor(other_aud), 401},
      {"expired", BearerFor(fixtures::PodTokenClaims("ml", "p1", "u1", 1'799'999'000)), 401},
      {"a pod the operator never gated",
       BearerFor(fixtures::PodTokenClaims("ml", "stranger", "u9", kExp)), 403},
      {"a gated pod's name with another uid",
       BearerFor(fixtures::PodTokenClaims("ml", "p1", "u9", kExp)), 403},
      {"a gated pod's name in another namespace",
       BearerFor(fixtures::PodTokenClaims("other", "p1", "u1", kExp)), 403},
  };
  for (const Case& c : cases) {
    Harness h;
    HttpResponse r = HandleMissReport(Post(good, c.auth), h.intake());
    EXPECT_EQ(r.status, c.want) << c.name << ": " << r.body;
    EXPECT_EQ(h.review_calls, 0) << c.name << ": no TokenReview for a token that cannot pass";
  }
}

TEST(MissIntake, OneTokenReviewPerTokenUntilItExpires) {
  Harness h;
  const std::string body = core::MissReportToJson(Report());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(HandleMissReport(Post(body), h.intake()).status, 200) << i;
  }
  EXPECT_EQ(h.review_calls, 1);
  // A refused review is not kept: each try asks again.
  Harness refused;
  refused.review = Review(false, PodUser());
  for (int i = 0; i < 3; ++i) HandleMissReport(Post(body), refused.intake());
  EXPECT_EQ(refused.review_calls, 3);
  EXPECT_EQ(refused.reviews.size(), 0u);
}

TEST(MissIntake, ReviewsRunOnTheWorkersAndAFullQueueAnswers429) {
  Harness h;
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  h.on_review = [&] {
    entered.set_value();
    released.wait();
  };
  const MissIntake intake = h.intake();
  BoundedWorkers workers(1, 1);
  const std::string body = core::MissReportToJson(Report());
  std::vector<std::promise<HttpResponse>> answers(3);
  auto submit = [&](int i) {
    SubmitMissReport(
        Post(body), [&answers, i](HttpResponse r) { answers[i].set_value(r); }, intake, workers);
  };
  submit(0);
  entered.get_future().wait();  // the one worker is in the review
  submit(1);                    // waits in the queue
  submit(2);                    // no room
  auto third = answers[2].get_future();
  EXPECT_EQ(third.get().status, 429) << "answered at once, without a review";
  // A junk token is still answered at once, full queue or not.
  std::promise<HttpResponse> junk;
  SubmitMissReport(
      Post(body, "Bearer tok"), [&junk](HttpResponse r) { junk.set_value(r); }, intake, workers);
  EXPECT_EQ(junk.get_future().get().status, 401);
  release.set_value();
  EXPECT_EQ(answers[0].get_future().get().status, 200);
  EXPECT_EQ(answers[1].get_future().get().status, 200);
  workers.Stop();
  EXPECT_EQ(h.review_calls, 1) << "the second report used the first one's review";
}

TEST(MissIntake, APodSharingItsProcessNamespaceIsCountedNeverHarvested) {
  core::MissReport report = Report();
  report.harvest = core::HarvestListRef{2, 300, std::string(64, 'c')};
  const std::string body = core::MissReportToJson(report);
  Harness open;
  EXPECT_EQ(HandleMissReport(Post(body), open.intake()).status, 200);
  EXPECT_EQ(open.ledger.Harvestable("ml", "llama", kFp, kDigest).size(), 1u);

  Harness shared;
  (*shared.pod)["spec"]["shareProcessNamespace"] = true;
  HttpResponse r = HandleMissReport(Post(body), shared.intake());
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(shared.ledger.Harvestable("ml", "llama", kFp, kDigest).empty())
      << "its app could have written what its watcher copied";
  EXPECT_TRUE(shared.ledger.Summary("ml", "llama", kFp, kDigest).has_value()) << "misses count";
  EXPECT_FALSE(MayHarvestFrom(*shared.pod));
  EXPECT_TRUE(MayHarvestFrom(*open.pod));
}

TEST(MissIntake, HandlerRecordsInTheLedgerAndAnswersWhatWasNew) {
  Harness h;
  const std::string body = core::MissReportToJson(Report());
  HttpResponse first = HandleMissReport(Post(body), h.intake());
  EXPECT_EQ(Json::parse(first.body), (Json{{"accepted", 1}, {"new", 1}, {"dropped", 0}}));
  HttpResponse again = HandleMissReport(Post(body), h.intake());
  EXPECT_EQ(Json::parse(again.body), (Json{{"accepted", 1}, {"new", 0}, {"dropped", 0}}));
  auto s = h.ledger.Summary("ml", "llama", kFp, kDigest);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 1);
  ASSERT_EQ(h.records.size(), 2u);
  EXPECT_TRUE(h.records[0].event.has_value());
}

TEST(MissIntake, EventMessageNamesKernelsAndPodsWithinBounds) {
  const MissSource src{"ml", "llama", kFp, kDigest, "p1", "u1"};
  EXPECT_EQ(MissEventMessage(src, {{"kernel add_kernel"}, {"p1", "p2"}}),
            "pods compiled after their gate on fingerprint 0123456789abcdef: kernel add_kernel "
            "(pods: p1, p2); the warmup did not produce these: add the shapes to spec.warmup");
  MissEventDue many;
  for (int i = 0; i < 50; ++i) {
    many.details.push_back("kernel " + std::string(500, 'k'));
    many.pods.push_back("pod-" + std::string(200, 'p'));
  }
  const std::string m = MissEventMessage(src, many);
  EXPECT_LT(m.size(), 1024u) << "named items are cut, the rest counted";
  EXPECT_NE(m.find("and 45 more"), std::string::npos) << m;
}

}  // namespace
}  // namespace kc::op
