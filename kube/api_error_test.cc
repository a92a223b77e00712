#include "kube/api_error.h"

#include <gtest/gtest.h>

#include <string>

namespace kc::kube {
namespace {

struct Case {
  const char* name;
  int http;
  std::string body;
  StatusCode want;
  std::vector<std::string> message_has;
};

// Bodies as kube-apiserver 1.34 sends them.
const Case
    kCases[] =
        {
            {"not_found",
             404,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"missing\" not found","reason":"NotFound","details":{"name":"missing","kind":"configmaps"},"code":404})json",
             StatusCode::kNotFound,
             {"get cm: configmaps \"missing\" not found"}},
            {"already_exists",
             409,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"cm\" already exists","reason":"AlreadyExists","details":{"name":"cm","kind":"configmaps"},"code":409})json",
             StatusCode::kAlreadyExists,
             {"already exists"}},
            {"conflict",
             409,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"cm\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"cm","kind":"configmaps"},"code":409})json",
             StatusCode::kConflict,
             {"the object has been modified"}},
            {"precondition_uid_conflict",
             409,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Precondition failed: UID in precondition: 123, UID in object meta: 456","reason":"Conflict","details":{"name":"cm","kind":"configmaps"},"code":409})json",
             StatusCode::kConflict,
             {"Precondition failed"}},
            {"expired",
             410,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The provided continue parameter is too old to display a consistent list result.","reason":"Expired","code":410})json",
             StatusCode::kGone,
             {"too old"}},
            {"gone",
             410,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (300)","reason":"Gone","code":410})json",
             StatusCode::kGone,
             {"too old resource version"}},
            {"invalid_with_causes",
             422,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain","reason":"Invalid","details":{"name":"Bad_Name","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain","field":"metadata.name"},{"reason":"FieldValueRequired","message":"Required value","field":"spec.size"}]},"code":422})json",
             StatusCode::kInvalidArgument,
             {"metadata.name: Invalid value: \"Bad_Name\"", "spec.size: Required value"}},
            {"bad_request",
             400,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request for an unknown reason","reason":"BadRequest","code":400})json",
             StatusCode::kInvalidArgument,
             {"rejected"}},
            {"unsupported_media_type",
             415,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json-patch+json","reason":"UnsupportedMediaType","code":415})json",
             StatusCode::kInvalidArgument,
             {"unknown format"}},
            {"forbidden",
             403,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"","reason":"Forbidden","details":{"kind":"configmaps"},"code":403})json",
             StatusCode::kPermissionDenied,
             {"system:anonymous"}},
            {"unauthorized",
             401,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})json",
             StatusCode::kUnauthenticated,
             {"Unauthorized"}},
            {"too_many_requests",
             429,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","details":{"causes":[{"message":"the server has received too many requests"}],"retryAfterSeconds":1},"code":429})json",
             StatusCode::kUnavailable,
             {"Too many requests"}},
            {"internal_error",
             500,
             R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: etcdserver: leader changed","reason":"InternalError","details":{"causes":[{"message":"etcdserver: leader changed"}]},"code":500})json",
             StatusCode::kUnavailable,
             {"leader changed"}},
            {"timeout", 504, R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","details":{},"code":504})json", StatusCode::kUnavailable, {"Timeout"}},
            {"plain_text_503",
             503,
             "Service Unavailable\n",
             StatusCode::kUnavailable,
             {"HTTP 503: Service Unavailable"}},
            {"plain_text_404",
             404,
             "404 page not found\n",
             StatusCode::kNotFound,
             {"404 page not found"}},
            {"no_body_418", 418, "", StatusCode::kUnknown, {"HTTP 418"}},
};

TEST(StatusFromResponseTest, Table) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    HttpResponse response;
    response.status = c.http;
    response.body = c.body;
    Status s = StatusFromResponse(response, "get cm");
    EXPECT_EQ(s.code(), c.want) << s;
    for (const auto& part : c.message_has) {
      EXPECT_NE(s.message().find(part), std::string::npos) << s << " lacks " << part;
    }
    EXPECT_EQ(s.message().rfind("get cm: ", 0), 0u) << s;
  }
}

TEST(StatusFromResponseTest, SuccessIsOk) {
  for (int code : {200, 201, 202, 204}) {
    HttpResponse response;
    response.status = code;
    EXPECT_TRUE(StatusFromResponse(response, "x").ok());
  }
}

TEST(StatusFromApiStatusTest, WatchErrorEventObject) {
  auto object = nlohmann::json::parse(
      R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (3451)","reason":"Expired","code":410})json");
  Status s = StatusFromApiStatus(object, 200, "watch configmaps");
  EXPECT_TRUE(IsGone(s)) << s;
  // The code inside the status wins over the transport's 200.
  auto internal = nlohmann::json::parse(R"json({"kind":"Status","code":500,"message":"boom"})json");
  EXPECT_EQ(StatusFromApiStatus(internal, 200, "").code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace kc::kube
