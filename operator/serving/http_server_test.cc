#include "operator/serving/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "operator/testing/http_get.h"

namespace kc::op {
namespace {

TEST(ParseTargetTest, DecodesQuery) {
  HttpRequest r =
      ParseTarget("GET", "/v1/resolve?namespace=ml&kernelcache=llama%2D1&node=gpu+07&x");
  EXPECT_EQ(r.path, "/v1/resolve");
  EXPECT_EQ(r.query.at("namespace"), "ml");
  EXPECT_EQ(r.query.at("kernelcache"), "llama-1");
  EXPECT_EQ(r.query.at("node"), "gpu 07");
  EXPECT_EQ(r.query.at("x"), "");
  EXPECT_EQ(ParseTarget("GET", "/healthz").path, "/healthz");
}

TEST(HttpServerTest, ServesHandlersAndErrors) {
  auto server = HttpServer::Listen("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->Handle("/hello", [](const HttpRequest& r) {
    return HttpResponse{200, "text/plain", r.query.count("who") ? r.query.at("who") : ""};
  });
  (*server)->Handle("/throw",
                    [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("bad"); });
  (*server)->Start();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);

  auto ok = HttpGet("127.0.0.1", port, "/hello?who=kc");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "kc");
  EXPECT_EQ(ok->content_type, "text/plain");

  auto missing = HttpGet("127.0.0.1", port, "/nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->body, R"({"error":"no handler for /nope"})");

  auto thrown = HttpGet("127.0.0.1", port, "/throw");
  ASSERT_TRUE(thrown.ok());
  EXPECT_EQ(thrown->status, 500);

  // Concurrent clients.
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto r = HttpGet("127.0.0.1", port, "/hello?who=x");
      if (r.ok() && r->status == 200) ++good;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 8);

  (*server)->Stop();
  EXPECT_FALSE(HttpGet("127.0.0.1", port, "/hello").ok());
}

TEST(HttpServerTest, AnAsyncHandlerWaitingNeverDelaysOtherRequests) {
  auto server = HttpServer::Listen("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->Handle("/healthz", [](const HttpRequest&) {
    return HttpResponse{200, "text/plain", "ok"};
  });
  std::promise<HttpDone> waiting;
  (*server)->HandlePostAsync("/slow", [&waiting](HttpRequest req, HttpDone done) {
    EXPECT_EQ(req.body, "payload");
    EXPECT_EQ(req.authorization, "Bearer x");
    waiting.set_value(std::move(done));
  });
  (*server)->Start();
  const int port = (*server)->port();

  auto slow = std::async(std::launch::async, [port] {
    return HttpPost("127.0.0.1", port, "/slow", "payload", "Bearer x");
  });
  HttpDone done = waiting.get_future().get();  // the POST is held by its handler
  auto health = HttpGet("127.0.0.1", port, "/healthz");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 200) << "served while the POST waits";
  auto get_slow = HttpGet("127.0.0.1", port, "/slow");
  ASSERT_TRUE(get_slow.ok());
  EXPECT_EQ(get_slow->status, 405) << "an async POST route answers other methods 405";

  done({202, "application/json", R"({"queued":true})"});  // from this thread
  auto answered = slow.get();
  ASSERT_TRUE(answered.ok()) << answered.status();
  EXPECT_EQ(answered->status, 202);
  EXPECT_EQ(answered->body, R"({"queued":true})");
}

TEST(HttpServerTest, BusyPortIsAnErrorNamingIt) {
  auto first = HttpServer::Listen("127.0.0.1", 0);
  ASSERT_TRUE(first.ok());
  auto second = HttpServer::Listen("127.0.0.1", (*first)->port());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find(std::to_string((*first)->port())), std::string::npos);
  EXPECT_FALSE(HttpServer::Listen("not-an-ip", 0).ok());
}

}  // namespace
}  // namespace kc::op
