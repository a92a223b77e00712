#include "kube/rest_client.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "kube/testing/fake_transport.h"

namespace kc::kube {
namespace {

using resources::kConfigMaps;

class RestClientTest : public ::testing::Test {
 protected:
  std::shared_ptr<FakeTransport> fake_ = std::make_shared<FakeTransport>();
  RestClient client_{fake_};

  HttpRequest LastRequest() {
    auto requests = fake_->requests();
    EXPECT_FALSE(requests.empty());
    return requests.empty() ? HttpRequest{} : requests.back();
  }
};

TEST_F(RestClientTest, GetBuildsPathAndParses) {
  fake_->EnqueueResponse(200, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})");
  auto got = client_.Get(kConfigMaps, "ns", "a");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["metadata"]["name"], "a");
  HttpRequest req = LastRequest();
  EXPECT_EQ(req.method, "GET");
  EXPECT_EQ(req.path, "/api/v1/namespaces/ns/configmaps/a");
  EXPECT_EQ(req.headers["Accept"], "application/json");
  EXPECT_TRUE(req.body.empty());
}

TEST_F(RestClientTest, GetMapsNotFoundWithContext) {
  fake_->EnqueueResponse(
      404,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"a\" not found","reason":"NotFound","code":404})");
  auto got = client_.Get(kConfigMaps, "ns", "a");
  ASSERT_TRUE(IsNotFound(got.status())) << got.status();
  EXPECT_EQ(got.status().message(),
            "get configmaps \"a\" in namespace \"ns\": configmaps \"a\" not found");
}

TEST_F(RestClientTest, TransportErrorKeepsCodeAndAddsContext) {
  fake_->Enqueue(UnavailableError("connection refused"));
  auto got = client_.Get(resources::kNodes, "", "n1");
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(got.status().message(), "get nodes \"n1\": connection refused");
}

TEST_F(RestClientTest, NonJsonSuccessBodyIsInternal) {
  fake_->EnqueueResponse(200, "<html>proxy</html>");
  auto got = client_.Get(kConfigMaps, "ns", "a");
  EXPECT_EQ(got.status().code(), StatusCode::kInternal);
}

TEST_F(RestClientTest, ListEncodesQueryAndFillsTypeMeta) {
  fake_->EnqueueResponse(
      200,
      R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"tok"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
  ListOptions opts;
  opts.label_selector = "app=llama,tier in (a, b)";
  opts.field_selector = "metadata.name!=x";
  opts.limit = 2;
  opts.continue_token = "c/1+";
  auto got = client_.List(kConfigMaps, "ns", opts);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(
      LastRequest().path,
      "/api/v1/namespaces/ns/configmaps?labelSelector=app%3Dllama%2Ctier%20in%20%28a%2C%20b%29"
      "&fieldSelector=metadata.name%21%3Dx&limit=2&continue=c%2F1%2B");
  ASSERT_EQ(got->items.size(), 2u);
  EXPECT_EQ(got->items[0]["apiVersion"], "v1");
  EXPECT_EQ(got->items[0]["kind"], "ConfigMap");
  EXPECT_EQ(got->resource_version, "42");
  EXPECT_EQ(got->continue_token, "tok");
}

TEST_F(RestClientTest, ListAllFollowsContinueTokens) {
  fake_->SetHandler([](const HttpRequest& req) -> StatusOr<HttpResponse> {
    HttpResponse r;
    r.status = 200;
    if (req.path.find("continue=") == std::string::npos) {
      r.body =
          R"({"metadata":{"resourceVersion":"10","continue":"p2"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})";
    } else if (req.path.find("continue=p2") != std::string::npos) {
      r.body =
          R"({"metadata":{"resourceVersion":"10","continue":"p3"},"items":[{"metadata":{"name":"c"}},{"metadata":{"name":"d"}}]})";
    } else {
      r.body = R"({"metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"e"}}]})";
    }
    return r;
  });
  ListOptions opts;
  opts.limit = 2;
  opts.label_selector = "x=y";
  auto all = ListAll(client_, kConfigMaps, "ns", opts);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->items.size(), 5u);
  EXPECT_EQ(all->items[4]["metadata"]["name"], "e");
  EXPECT_EQ(all->resource_version, "10");
  EXPECT_TRUE(all->continue_token.empty());
  auto reqs = fake_->requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].path,
            "/api/v1/namespaces/ns/configmaps?labelSelector=x%3Dy&limit=2&continue=p2");
  EXPECT_EQ(reqs[2].path,
            "/api/v1/namespaces/ns/configmaps?labelSelector=x%3Dy&limit=2&continue=p3");
}

TEST_F(RestClientTest, ListTransformsEachItemAsTheBodyIsParsed) {
  // Nested objects named like list fields are left alone: only the
  // top-level "items" elements are items.
  fake_->EnqueueResponse(
      200, R"({"kind":"ConfigMapList","metadata":{"resourceVersion":"7","items":{"x":1}},"items":[)"
           R"({"metadata":{"name":"a"},"data":{"big":"xxxxxxxx","items":[{"k":1}]}},)"
           R"({"metadata":{"name":"b"},"data":{"big":"yyyyyyyy"}}],"extra":[{"n":1}]})");
  std::vector<std::string> seen;
  ListOptions opts;
  opts.item_transform = [&](const Json& item) {
    seen.push_back(item.value("kind", "") + "/" + item["metadata"].value("name", ""));
    return Json{{"kind", item["kind"]}, {"metadata", item["metadata"]}};
  };
  auto got = client_.List(kConfigMaps, "ns", opts);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->items_transformed);
  EXPECT_EQ(seen, (std::vector<std::string>{"ConfigMap/a", "ConfigMap/b"}));
  ASSERT_EQ(got->items.size(), 2u);
  EXPECT_FALSE(got->items[0].contains("data"));
  EXPECT_EQ(got->items[1]["metadata"]["name"], "b");
  EXPECT_EQ(got->resource_version, "7");

  fake_->EnqueueResponse(200, R"({"metadata":{},"items":[{"metadata":{"name":"a"},"data":{}}]})");
  auto plain = client_.List(kConfigMaps, "ns", ListOptions{});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->items_transformed);
  EXPECT_TRUE(plain->items[0].contains("data"));
}

TEST_F(RestClientTest, ListEachHandsItemsOverPageByPageTransformedOnce) {
  int page = 0;
  fake_->SetHandler([&](const HttpRequest& req) -> StatusOr<HttpResponse> {
    HttpResponse r;
    r.status = 200;
    ++page;
    r.body =
        req.path.find("continue=") == std::string::npos
            ? R"({"metadata":{"resourceVersion":"10","continue":"p2"},"items":[{"metadata":{"name":"a"},"data":{}}]})"
            : R"({"metadata":{"resourceVersion":"11"},"items":[{"metadata":{"name":"b"},"data":{}}]})";
    return r;
  });
  int transforms = 0;
  ObjectTransform slim = [&](const Json& item) {
    ++transforms;
    return Json{{"metadata", item["metadata"]}};
  };
  std::vector<std::pair<std::string, int>> got;  // name, page it arrived with
  ListOptions opts;
  opts.limit = 1;
  auto rv = ListEach(client_, kConfigMaps, "ns", opts, slim, [&](Json&& item) {
    EXPECT_FALSE(item.contains("data"));
    got.emplace_back(item["metadata"]["name"].get<std::string>(), page);
  });
  ASSERT_TRUE(rv.ok()) << rv.status();
  EXPECT_EQ(*rv, "10");  // the first page's snapshot
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int>>{{"a", 1}, {"b", 2}}));
  EXPECT_EQ(transforms, 2);
}

TEST_F(RestClientTest, ListAllStopsOnError) {
  fake_->EnqueueResponse(200, R"({"metadata":{"continue":"p2"},"items":[{}]})");
  fake_->EnqueueResponse(
      410,
      R"({"kind":"Status","message":"continue parameter is too old","reason":"Expired","code":410})");
  ListOptions opts;
  opts.limit = 1;
  auto all = ListAll(client_, kConfigMaps, "ns", opts);
  EXPECT_TRUE(IsGone(all.status())) << all.status();
}

TEST_F(RestClientTest, CreatePostsToCollectionWithTypeMeta) {
  fake_->EnqueueResponse(201, R"({"metadata":{"name":"a","uid":"u1"}})");
  auto got = client_.Create(kConfigMaps, "ns", Json{{"metadata", {{"name", "a"}}}});
  ASSERT_TRUE(got.ok()) << got.status();
  HttpRequest req = LastRequest();
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.path, "/api/v1/namespaces/ns/configmaps");
  EXPECT_EQ(req.content_type, "application/json");
  Json body = Json::parse(req.body);
  EXPECT_EQ(body["apiVersion"], "v1");
  EXPECT_EQ(body["kind"], "ConfigMap");
}

TEST_F(RestClientTest, CreateAlreadyExists) {
  fake_->EnqueueResponse(
      409,
      R"({"kind":"Status","message":"configmaps \"a\" already exists","reason":"AlreadyExists","code":409})");
  auto got = client_.Create(kConfigMaps, "ns", Json{{"metadata", {{"name", "a"}}}});
  EXPECT_TRUE(IsAlreadyExists(got.status())) << got.status();
  EXPECT_NE(got.status().message().find("create configmaps \"a\""), std::string::npos);
}

TEST_F(RestClientTest, UpdateAndUpdateStatusPutToNameAndSubresource) {
  fake_->EnqueueResponse(200, "{}");
  fake_->EnqueueResponse(200, "{}");
  Json obj = {{"metadata", {{"name", "j1"}, {"resourceVersion", "7"}}},
              {"status", {{"active", 1}}}};
  ASSERT_TRUE(client_.Update(resources::kJobs, "ns", obj).ok());
  ASSERT_TRUE(client_.UpdateStatus(resources::kJobs, "ns", obj).ok());
  auto reqs = fake_->requests();
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].path, "/apis/batch/v1/namespaces/ns/jobs/j1");
  EXPECT_EQ(reqs[1].path, "/apis/batch/v1/namespaces/ns/jobs/j1/status");
  EXPECT_EQ(Json::parse(reqs[1].body)["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(Json::parse(reqs[1].body)["apiVersion"], "batch/v1");
}

TEST_F(RestClientTest, UpdateWithoutNameIsInvalidArgument) {
  auto got = client_.Update(kConfigMaps, "ns", Json{{"data", {{"a", "b"}}}});
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.status().message().find("metadata.name"), std::string::npos);
  EXPECT_TRUE(fake_->requests().empty());
}

TEST_F(RestClientTest, PatchContentTypes) {
  struct Case {
    PatchType type;
    const char* content_type;
  };
  const Case cases[] = {
      {PatchType::kMerge, "application/merge-patch+json"},
      {PatchType::kStrategicMerge, "application/strategic-merge-patch+json"},
      {PatchType::kJsonPatch, "application/json-patch+json"},
  };
  for (const auto& c : cases) {
    fake_->EnqueueResponse(200, "{}");
    PatchOptions opts;
    opts.field_manager = "";
    ASSERT_TRUE(
        client_.Patch(kConfigMaps, "ns", "a", c.type, Json{{"data", {{"k", "v"}}}}, opts).ok());
    HttpRequest req = LastRequest();
    EXPECT_EQ(req.method, "PATCH");
    EXPECT_EQ(req.path, "/api/v1/namespaces/ns/configmaps/a");
    EXPECT_EQ(req.content_type, c.content_type);
    EXPECT_EQ(Json::parse(req.body), (Json{{"data", {{"k", "v"}}}}));
  }
}

TEST_F(RestClientTest, ServerSideApply) {
  fake_->EnqueueResponse(200, "{}");
  PatchOptions opts;
  opts.field_manager = "kernelcache-operator";
  opts.force = true;
  opts.subresource = "status";
  Json patch = {{"status", {{"phase", "Ready"}}}};
  ASSERT_TRUE(client_.Patch(resources::kJobs, "ns", "j", PatchType::kApply, patch, opts).ok());
  HttpRequest req = LastRequest();
  EXPECT_EQ(
      req.path,
      "/apis/batch/v1/namespaces/ns/jobs/j/status?fieldManager=kernelcache-operator&force=true");
  EXPECT_EQ(req.content_type, "application/apply-patch+yaml");
  Json body = Json::parse(req.body);
  EXPECT_EQ(body["apiVersion"], "batch/v1");
  EXPECT_EQ(body["kind"], "Job");
  EXPECT_EQ(body["metadata"]["name"], "j");
  EXPECT_EQ(body["status"]["phase"], "Ready");
}

TEST_F(RestClientTest, ApplyWithoutFieldManagerIsRejected) {
  PatchOptions opts;
  opts.field_manager = "";
  auto got = client_.Patch(kConfigMaps, "ns", "a", PatchType::kApply, Json::object(), opts);
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fake_->requests().empty());
}

TEST_F(RestClientTest, DeleteSendsOptions) {
  fake_->EnqueueResponse(200, R"({"kind":"Status","status":"Success"})");
  DeleteOptions opts;
  opts.precondition_uid = "u1";
  opts.precondition_resource_version = "5";
  opts.propagation = PropagationPolicy::kForeground;
  opts.grace_period_seconds = 0;
  ASSERT_TRUE(client_.Delete(resources::kJobs, "ns", "j", opts).ok());
  HttpRequest req = LastRequest();
  EXPECT_EQ(req.method, "DELETE");
  EXPECT_EQ(req.path, "/apis/batch/v1/namespaces/ns/jobs/j");
  Json body = Json::parse(req.body);
  EXPECT_EQ(body["kind"], "DeleteOptions");
  EXPECT_EQ(body["preconditions"]["uid"], "u1");
  EXPECT_EQ(body["preconditions"]["resourceVersion"], "5");
  EXPECT_EQ(body["propagationPolicy"], "Foreground");
  EXPECT_EQ(body["gracePeriodSeconds"], 0);
}

TEST_F(RestClientTest, DeleteDefaultsSendNoPolicy) {
  fake_->EnqueueResponse(200, "{}");
  ASSERT_TRUE(client_.Delete(kConfigMaps, "ns", "a").ok());
  Json body = Json::parse(LastRequest().body);
  EXPECT_FALSE(body.contains("preconditions"));
  EXPECT_FALSE(body.contains("propagationPolicy"));
  EXPECT_FALSE(body.contains("gracePeriodSeconds"));
}

TEST_F(RestClientTest, DeletePreconditionFailureIsConflict) {
  fake_->EnqueueResponse(
      409,
      R"({"kind":"Status","message":"Operation cannot be fulfilled on ConfigMap \"a\": the UID in the precondition (x) does not match the UID in record (y). The object might have been deleted and then recreated","reason":"Conflict","code":409})");
  DeleteOptions opts;
  opts.precondition_uid = "x";
  EXPECT_TRUE(IsConflict(client_.Delete(kConfigMaps, "ns", "a", opts)));
}

TEST_F(RestClientTest, WatchBuildsQueryAndDeliversEventsInOrder) {
  FakeStream stream;
  stream.lines = {
      R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"11"}}})",
      "",
      R"({"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"12"}}})",
      R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"13"}}})",
      R"({"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"14"}}})",
  };
  fake_->EnqueueStream(stream);
  WatchOptions opts;
  opts.resource_version = "10";
  opts.label_selector = "a=b";
  opts.timeout_seconds = 60;
  std::vector<WatchEvent> seen;
  Status s = client_.Watch(kConfigMaps, "ns", opts, {}, [&](const WatchEvent& e) {
    seen.push_back(e);
    return true;
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(LastRequest().path,
            "/api/v1/namespaces/ns/configmaps?watch=1&allowWatchBookmarks=true&labelSelector=a%3Db"
            "&resourceVersion=10&timeoutSeconds=60");
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kAdded);
  EXPECT_EQ(seen[0].object["kind"], "ConfigMap");
  EXPECT_EQ(seen[1].type, WatchEvent::Type::kModified);
  EXPECT_EQ(seen[2].type, WatchEvent::Type::kBookmark);
  EXPECT_EQ(seen[3].type, WatchEvent::Type::kDeleted);
  EXPECT_EQ(seen[3].object["metadata"]["resourceVersion"], "14");
}

TEST_F(RestClientTest, WatchErrorEvent410IsGone) {
  FakeStream stream;
  stream.lines = {
      R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})",
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (3451)","reason":"Expired","code":410}})json",
      R"({"type":"ADDED","object":{"metadata":{"name":"never"}}})",
  };
  fake_->EnqueueStream(stream);
  int seen = 0;
  Status s = client_.Watch(kConfigMaps, "ns", {}, {}, [&](const WatchEvent&) {
    ++seen;
    return true;
  });
  EXPECT_TRUE(IsGone(s)) << s;
  EXPECT_EQ(seen, 1);
}

TEST_F(RestClientTest, WatchHttpErrorIsMapped) {
  FakeStream stream;
  stream.status = 403;
  stream.error_body =
      R"({"kind":"Status","message":"configmaps is forbidden","reason":"Forbidden","code":403})";
  fake_->EnqueueStream(stream);
  Status s = client_.Watch(kConfigMaps, "ns", {}, {}, [](const WatchEvent&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
}

TEST_F(RestClientTest, WatchMalformedLineIsInternal) {
  FakeStream stream;
  stream.lines = {"{not json"};
  fake_->EnqueueStream(stream);
  Status s = client_.Watch(kConfigMaps, "ns", {}, {}, [](const WatchEvent&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s;
}

TEST_F(RestClientTest, WatchHandlerStopsIt) {
  FakeStream stream;
  stream.lines = {R"({"type":"ADDED","object":{}})", R"({"type":"ADDED","object":{}})"};
  stream.block_until_stop = true;
  fake_->EnqueueStream(stream);
  int seen = 0;
  Status s = client_.Watch(kConfigMaps, "ns", {}, {}, [&](const WatchEvent&) {
    ++seen;
    return false;
  });
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(seen, 1);
}

TEST_F(RestClientTest, WatchConnectionFailurePassesThrough) {
  FakeStream stream;
  stream.lines = {R"({"type":"ADDED","object":{}})"};
  stream.end = DeadlineExceededError("idle timeout");
  fake_->EnqueueStream(stream);
  Status s = client_.Watch(kConfigMaps, "ns", {}, {}, [](const WatchEvent&) { return true; });
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s;
}

TEST_F(RestClientTest, WatchCancelledByStopToken) {
  FakeStream stream;
  stream.lines = {R"({"type":"ADDED","object":{}})"};
  stream.block_until_stop = true;
  fake_->EnqueueStream(stream);
  std::stop_source stop;
  Status result;
  std::thread watcher([&] {
    result = client_.Watch(kConfigMaps, "", {}, stop.get_token(),
                           [](const WatchEvent&) { return true; });
  });
  fake_->WaitForRequests(1);
  stop.request_stop();
  watcher.join();
  EXPECT_EQ(result.code(), StatusCode::kCancelled) << result;
  EXPECT_EQ(LastRequest().path,
            "/api/v1/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=300");
}

}  // namespace
}  // namespace kc::kube
