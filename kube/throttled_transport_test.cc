#include "kube/throttled_transport.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "kube/testing/fake_clock.h"
#include "kube/testing/fake_transport.h"

namespace kc::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

StatusOr<HttpResponse> Response(int status, std::map<std::string, std::string> headers = {}) {
  HttpResponse r;
  r.status = status;
  r.headers = std::move(headers);
  return r;
}

TEST(DecideRetryTest, Table) {
  ThrottleOptions o;
  o.max_attempts = 4;
  o.initial_backoff = milliseconds(100);
  o.max_backoff = milliseconds(250);
  o.max_retry_after = seconds(30);
  struct Case {
    const char* name;
    std::string method;
    StatusOr<HttpResponse> result;
    int attempt;
    std::optional<Clock::Duration> want;
  };
  const Case cases[] = {
      {"ok", "GET", Response(200), 1, std::nullopt},
      {"not_found", "GET", Response(404), 1, std::nullopt},
      {"conflict", "PUT", Response(409), 1, std::nullopt},
      {"429_post_backoff", "POST", Response(429), 1, milliseconds(100)},
      {"429_retry_after", "POST", Response(429, {{"retry-after", "3"}}), 1, seconds(3)},
      {"retry_after_capped", "GET", Response(503, {{"retry-after", "600"}}), 1, seconds(30)},
      {"retry_after_garbage", "GET", Response(503, {{"retry-after", "soon"}}), 2,
       milliseconds(200)},
      {"503_post", "POST", Response(503), 1, milliseconds(100)},
      {"500_get", "GET", Response(500), 2, milliseconds(200)},
      {"500_get_capped", "GET", Response(500), 3, milliseconds(250)},
      {"500_post_not_retried", "POST", Response(500), 1, std::nullopt},
      {"500_patch_not_retried", "PATCH", Response(500), 1, std::nullopt},
      {"504_delete", "DELETE", Response(504), 1, milliseconds(100)},
      {"501_never", "GET", Response(501), 1, std::nullopt},
      {"last_attempt", "GET", Response(503), 4, std::nullopt},
      {"conn_refused_get", "GET", UnavailableError("refused"), 1, milliseconds(100)},
      {"timeout_put", "PUT", DeadlineExceededError("timeout"), 1, milliseconds(100)},
      {"conn_refused_post", "POST", UnavailableError("refused"), 1, std::nullopt},
      {"tls_error_get", "GET", InvalidArgumentError("bad cert"), 1, std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(DecideRetry(c.method, c.result, c.attempt, o), c.want) << c.name;
  }
}

class ThrottledTransportTest : public ::testing::Test {
 protected:
  std::unique_ptr<ThrottledTransport> Make(ThrottleOptions options) {
    return std::make_unique<ThrottledTransport>(fake_, std::move(options), clock_,
                                                [this](Clock::Duration d, const std::stop_token&) {
                                                  sleeps_.push_back(d);
                                                  clock_.Advance(d);
                                                  return true;
                                                });
  }

  std::shared_ptr<FakeTransport> fake_ = std::make_shared<FakeTransport>();
  FakeClock clock_;
  std::vector<Clock::Duration> sleeps_;
};

TEST_F(ThrottledTransportTest, RetriesHonouringRetryAfterThenSucceeds) {
  ThrottleOptions o;
  o.qps = 0;
  auto t = Make(o);
  fake_->EnqueueResponse(429, "slow down", {{"retry-after", "2"}});
  fake_->EnqueueResponse(500, "boom");
  fake_->EnqueueResponse(200, "{}");
  HttpRequest req;
  req.method = "GET";
  req.path = "/api/v1/nodes";
  auto got = t->Do(req);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(fake_->requests().size(), 3u);
  EXPECT_EQ(sleeps_, (std::vector<Clock::Duration>{seconds(2), milliseconds(400)}));
}

TEST_F(ThrottledTransportTest, GivesUpAfterMaxAttemptsWithLastResponse) {
  ThrottleOptions o;
  o.qps = 0;
  o.max_attempts = 3;
  auto t = Make(o);
  for (int i = 0; i < 5; ++i) fake_->EnqueueResponse(503, "busy " + std::to_string(i));
  HttpRequest req;
  req.method = "GET";
  auto got = t->Do(req);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, 503);
  EXPECT_EQ(got->body, "busy 2");
  EXPECT_EQ(fake_->requests().size(), 3u);
}

TEST_F(ThrottledTransportTest, PostNotRetriedOnConnectionError) {
  ThrottleOptions o;
  o.qps = 0;
  auto t = Make(o);
  fake_->Enqueue(UnavailableError("connection reset"));
  HttpRequest req;
  req.method = "POST";
  EXPECT_EQ(t->Do(req).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(fake_->requests().size(), 1u);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(ThrottledTransportTest, BurstThenPacedAtQps) {
  ThrottleOptions o;
  o.qps = 10;
  o.burst = 3;
  auto t = Make(o);
  fake_->SetHandler([](const HttpRequest&) { return Response(200); });
  HttpRequest req;
  req.method = "GET";
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(t->Do(req).ok());
  // Three from the burst without waiting, then one per 100ms.
  ASSERT_EQ(sleeps_.size(), 3u);
  for (auto d : sleeps_) {
    EXPECT_NEAR(std::chrono::duration<double>(d).count(), 0.1, 1e-6);
  }
}

TEST_F(ThrottledTransportTest, OnWaitHearsEveryAttemptWithItsWait) {
  ThrottleOptions o;
  o.qps = 10;
  o.burst = 1;
  std::vector<std::pair<std::string, Clock::Duration>> heard;
  o.on_wait = [&heard](const std::string& method, Clock::Duration waited) {
    heard.emplace_back(method, waited);
  };
  auto t = Make(o);
  fake_->EnqueueResponse(503, "busy");  // the GET's first attempt: retried
  fake_->EnqueueResponse(200, "{}");
  fake_->EnqueueResponse(201, "{}");
  HttpRequest get;
  get.method = "GET";
  ASSERT_TRUE(t->Do(get).ok());
  HttpRequest post;
  post.method = "POST";
  ASSERT_TRUE(t->Do(post).ok());
  FakeStream s;
  s.lines = {"a"};
  fake_->EnqueueStream(s);
  HttpResponse response;
  ASSERT_TRUE(t->Stream(
                   get, {}, [](std::string_view) { return true; }, &response)
                  .ok());
  // The burst's one token, then each attempt waits for the next (the
  // retry's backoff of 200 ms already refilled one token for the second).
  ASSERT_EQ(heard.size(), 4u);
  EXPECT_EQ(heard[0], std::make_pair(std::string("GET"), Clock::Duration::zero()));
  EXPECT_EQ(heard[1].first, "GET");
  EXPECT_EQ(heard[1].second, Clock::Duration::zero());
  EXPECT_EQ(heard[2].first, "POST");
  EXPECT_NEAR(std::chrono::duration<double>(heard[2].second).count(), 0.1, 1e-6);
  EXPECT_EQ(heard[3].first, "GET");
  EXPECT_NEAR(std::chrono::duration<double>(heard[3].second).count(), 0.1, 1e-6);
  // What on_wait heard is what the transport slept for the tokens.
  EXPECT_EQ(sleeps_.size(), 3u);  // the backoff and two token waits
}

TEST_F(ThrottledTransportTest, StreamIsLimitedButNotRetried) {
  ThrottleOptions o;
  o.qps = 1;
  o.burst = 1;
  auto t = Make(o);
  FakeStream s1;
  s1.status = 503;
  fake_->EnqueueStream(s1);
  FakeStream s2;
  s2.lines = {"a"};
  fake_->EnqueueStream(s2);
  HttpRequest req;
  req.method = "GET";
  HttpResponse response;
  ASSERT_TRUE(t->Stream(
                   req, {}, [](std::string_view) { return true; }, &response)
                  .ok());
  EXPECT_EQ(response.status, 503);
  EXPECT_TRUE(sleeps_.empty());
  std::vector<std::string> lines;
  ASSERT_TRUE(t->Stream(
                   req, {},
                   [&](std::string_view l) {
                     lines.emplace_back(l);
                     return true;
                   },
                   &response)
                  .ok());
  EXPECT_EQ(lines, std::vector<std::string>{"a"});
  ASSERT_EQ(sleeps_.size(), 1u);
  EXPECT_EQ(sleeps_[0], seconds(1));
}

}  // namespace
}  // namespace kc::kube
