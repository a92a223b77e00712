#include "initwarm/net/resolve_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "initwarm/testing/fake_operator.h"

namespace kc::initwarm {
namespace {

using testing::FakeOperator;

constexpr char kReadyBody[] = R"({"fingerprint":"3f9a1c2b7d4e5f60","state":"Ready",
  "directory":"v1/3f9a1c2b7d4e5f60","manifestDigest":"ab12","message":"cache is ready",
  "node":{"gpuProduct":"NVIDIA-H200","computeCapability":"9.0","driver":"580.159.04",
          "cudaDriver":"13.0","arch":"amd64"}})";

TEST(HttpResolverTest, ReadyAnswerAndQueryEncoding) {
  FakeOperator op(200, kReadyBody);
  auto a = NewHttpResolver(op.url())->Resolve("team a", "llama&co", "gpu-node-1");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->fingerprint, "3f9a1c2b7d4e5f60");
  EXPECT_EQ(a->state, core::ResolveState::kReady);
  EXPECT_EQ(a->directory, "v1/3f9a1c2b7d4e5f60");
  EXPECT_EQ(a->manifest_digest, "ab12");
  EXPECT_EQ(a->message, "cache is ready");
  EXPECT_EQ(a->node.gpu_product, "NVIDIA-H200");
  EXPECT_EQ(a->node.cuda_driver_version, "13.0");
  ASSERT_EQ(op.targets().size(), 1u);
  EXPECT_EQ(op.targets()[0],
            "/v1/resolve?namespace=team%20a&kernelcache=llama%26co&node=gpu-node-1");
}

TEST(HttpResolverTest, BaseUrlPrefixIsKept) {
  FakeOperator op(200, kReadyBody);
  auto a = NewHttpResolver(op.url() + "/kc/")->Resolve("ns", "kc", "n");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(op.targets().at(0), "/kc/v1/resolve?namespace=ns&kernelcache=kc&node=n");
}

// The endpoint's full URL (what an operator's --resolve-url may say) is the
// same as its base: /v1/resolve is not doubled.
TEST(HttpResolverTest, FullEndpointUrlIsAccepted) {
  FakeOperator op(200, kReadyBody);
  auto a = NewHttpResolver(op.url() + "/kc/v1/resolve")->Resolve("ns", "kc", "n");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(op.targets().at(0), "/kc/v1/resolve?namespace=ns&kernelcache=kc&node=n");
}

TEST(HttpResolverTest, ErrorStatusesCarryTheBodysMessage) {
  struct Case {
    unsigned http;
    std::string body;
    StatusCode want;
    std::string substr;
  };
  const std::vector<Case> cases = {
      {404, R"({"error":"kernelcache default/llama not found"})", StatusCode::kNotFound,
       "kernelcache default/llama not found"},
      {400, R"({"error":"node is required"})", StatusCode::kInvalidArgument, "node is required"},
      {503, R"({"error":"informer cache not synced"})", StatusCode::kUnavailable,
       "informer cache not synced"},
      {500, "plain text failure", StatusCode::kUnavailable, "plain text failure"},
      {403, R"({"error":"forbidden"})", StatusCode::kPermissionDenied, "forbidden"},
  };
  for (const auto& c : cases) {
    FakeOperator op(c.http, c.body);
    auto a = NewHttpResolver(op.url())->Resolve("default", "llama", "n1");
    ASSERT_FALSE(a.ok()) << c.http;
    EXPECT_EQ(a.status().code(), c.want) << a.status();
    EXPECT_NE(a.status().message().find(c.substr), std::string::npos) << a.status();
    EXPECT_NE(a.status().message().find("HTTP " + std::to_string(c.http)), std::string::npos);
  }
}

TEST(HttpResolverTest, MalformedAnswersAreRefused) {
  for (const std::string& body :
       {std::string("not json"), std::string(R"({"state":"Ready"})"),
        std::string(R"({"fingerprint":"3f9a1c2b7d4e5f60","state":"Sleeping","node":{}})"),
        std::string(R"({"fingerprint":"XYZ","state":"Ready"})")}) {
    FakeOperator op(200, body);
    auto a = NewHttpResolver(op.url())->Resolve("ns", "kc", "n");
    ASSERT_FALSE(a.ok()) << body;
    EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument) << a.status();
  }
}

TEST(HttpResolverTest, SilentServerTimesOut) {
  FakeOperator op(200, kReadyBody, /*hang=*/true);
  auto start = std::chrono::steady_clock::now();
  auto a = NewHttpResolver(op.url(), std::chrono::milliseconds(300))->Resolve("ns", "kc", "n");
  auto took = std::chrono::steady_clock::now() - start;
  // The server never answers, so only the client's timeout can end the call
  // (DeadlineExceeded), and not before it is due. No upper bound: a loaded
  // machine only makes it later.
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kDeadlineExceeded) << a.status();
  EXPECT_GE(took, std::chrono::milliseconds(300));
}

TEST(HttpResolverTest, ClosedPortIsUnavailable) {
  const unsigned short port = testing::ClosedLoopbackPort();
  auto a = NewHttpResolver("http://127.0.0.1:" + std::to_string(port))->Resolve("ns", "kc", "n");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kUnavailable) << a.status();
  EXPECT_NE(a.status().message().find("connect"), std::string::npos) << a.status();
}

TEST(HttpResolverTest, BadBaseUrl) {
  auto a = NewHttpResolver("https://kc.example")->Resolve("ns", "kc", "n");
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
}

TEST(ParseResolveAnswerTest, DirectoryDefaultsFromFingerprint) {
  auto a = ParseResolveAnswer(R"({"fingerprint":"0123456789abcdef","state":"Warming",
      "message":"warmup Job kc-0123 running for 2m","node":{"gpuProduct":"NVIDIA-H200",
      "computeCapability":"9.0","driver":"580.159.04","cudaDriver":"13.0","arch":"amd64"}})");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->directory, "v1/0123456789abcdef");
  EXPECT_EQ(a->manifest_digest, "");
}

TEST(ParseResolveAnswerTest, FinalAnswers) {
  // A node without GPU labels: final, no fingerprint, no node facts.
  auto a = ParseResolveAnswer(R"({"fingerprint":"","state":"Unknown","final":true,
      "reason":"NodeHasNoFingerprint","message":"node n has no GPU fingerprint"})");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->final);
  EXPECT_EQ(a->reason, "NodeHasNoFingerprint");
  // Not final: the fingerprint and node stay required.
  EXPECT_FALSE(ParseResolveAnswer(R"({"fingerprint":"","state":"Unknown"})").ok());
  auto bad = ParseResolveAnswer(R"({"fingerprint":"","state":"Unknown","final":"yes"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("final"), std::string::npos) << bad.status();
  // Degraded (a quarantined cache being re-warmed) is a known state.
  EXPECT_TRUE(ParseResolveAnswer(R"({"fingerprint":"0123456789abcdef","state":"Degraded",
      "node":{"gpuProduct":"NVIDIA-H200","computeCapability":"9.0","driver":"580.159.04",
      "cudaDriver":"13.0","arch":"amd64"}})")
                  .ok());
}

}  // namespace
}  // namespace kc::initwarm
