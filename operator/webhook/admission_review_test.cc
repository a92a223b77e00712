#include "operator/webhook/admission_review.h"

#include <gtest/gtest.h>

#include "base/base64.h"

namespace kc::webhook {
namespace {

Json Review() {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", "ml"},
            {"operation", "CREATE"},
            {"object", {{"metadata", {{"generateName", "llama-"}}}}},
            {"dryRun", true}}}};
}

std::string DecodeBase64ForTest(const std::string& in) {
  auto out = DecodeBase64(in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::string();
}

TEST(AdmissionReviewTest, DecodesARequest) {
  auto r = DecodeAdmissionReview(Review().dump());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(r->kind.group, "");
  EXPECT_EQ(r->kind.version, "v1");
  EXPECT_EQ(r->kind.name, "Pod");
  EXPECT_EQ(r->resource.name, "pods");
  EXPECT_EQ(r->ns, "ml");
  EXPECT_EQ(r->operation, "CREATE");
  EXPECT_TRUE(r->dry_run);
  EXPECT_EQ(r->object["metadata"]["generateName"], "llama-");
  EXPECT_TRUE(r->old_object.is_null());
}

TEST(AdmissionReviewTest, DeleteNeedsNoObject) {
  Json j = Review();
  j["request"]["operation"] = "DELETE";
  j["request"].erase("object");
  j["request"]["oldObject"] = {{"metadata", {{"name", "x"}}}};
  auto r = DecodeAdmissionReview(j.dump());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->object.is_null());
  EXPECT_EQ(r->old_object["metadata"]["name"], "x");
}

TEST(AdmissionReviewTest, MalformedRequestsGetClearErrors) {
  auto edit = [](std::function<void(Json&)> f) {
    Json j = Review();
    f(j);
    return j.dump();
  };
  struct Case {
    std::string name, body, want;  // `want`: substring of the message
  } cases[] = {
      {"empty", "", "empty body"},
      {"not JSON", "{\"apiVersion\":", "not valid JSON"},
      {"not an object", "[1,2]", "JSON object"},
      {"too deep", std::string(500, '[') + std::string(500, ']'), "nested deeper"},
      {"v1beta1", edit([](Json& j) { j["apiVersion"] = "admission.k8s.io/v1beta1"; }),
       "admission.k8s.io/v1"},
      {"no apiVersion", edit([](Json& j) { j.erase("apiVersion"); }), "apiVersion"},
      {"wrong kind", edit([](Json& j) { j["kind"] = "Pod"; }), "want AdmissionReview"},
      {"no request", edit([](Json& j) { j.erase("request"); }), "request is missing"},
      {"request null", edit([](Json& j) { j["request"] = nullptr; }), "request is missing"},
      {"request not object", edit([](Json& j) { j["request"] = "x"; }), "request must be"},
      {"no uid", edit([](Json& j) { j["request"].erase("uid"); }), "request.uid is missing"},
      {"uid number", edit([](Json& j) { j["request"]["uid"] = 7; }), "request.uid must be"},
      {"uid empty", edit([](Json& j) { j["request"]["uid"] = ""; }), "request.uid is empty"},
      {"no operation", edit([](Json& j) { j["request"].erase("operation"); }), "operation"},
      {"no object", edit([](Json& j) { j["request"].erase("object"); }), "request.object"},
      {"object not object", edit([](Json& j) { j["request"]["object"] = 3; }),
       "request.object must be"},
      {"oldObject not object", edit([](Json& j) { j["request"]["oldObject"] = "x"; }),
       "request.oldObject must be"},
  };
  for (const auto& c : cases) {
    auto r = DecodeAdmissionReview(c.body);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos)
        << c.name << ": " << r.status().message();
  }
}

// Mistyped optional fields are ignored, not fatal: the API server's own
// fields are well-typed, and a webhook must answer.
TEST(AdmissionReviewTest, MistypedOptionalFieldsAreIgnored) {
  Json j = Review();
  j["request"]["kind"] = "Pod";
  j["request"]["dryRun"] = "yes";
  j["request"]["namespace"] = 5;
  auto r = DecodeAdmissionReview(j.dump());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->kind.name, "");
  EXPECT_FALSE(r->dry_run);
  EXPECT_EQ(r->ns, "");
}

TEST(AdmissionReviewTest, DepthCheckSkipsStrings) {
  EXPECT_FALSE(JsonDeeperThan("{\"a\":\"[[[[[[[[[[[[\"}", 3));
  EXPECT_FALSE(JsonDeeperThan("{\"a\\\"[[[[\":1}", 1));
  EXPECT_TRUE(JsonDeeperThan("[[[[", 3));
  EXPECT_FALSE(JsonDeeperThan("[[[]]]", 3));
}

TEST(AdmissionReviewTest, EncodesAnAllowWithPatch) {
  AdmissionResponse resp;
  resp.uid = "u1";
  resp.patch =
      Json::array({{{"op", "add"}, {"path", "/metadata/annotations/a~1b"}, {"value", "c"}}});
  resp.warnings = {"careful"};
  const Json j = Json::parse(EncodeAdmissionReview(resp));
  EXPECT_EQ(j["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(j["kind"], "AdmissionReview");
  EXPECT_EQ(j["response"]["uid"], "u1");
  EXPECT_EQ(j["response"]["allowed"], true);
  EXPECT_EQ(j["response"]["patchType"], "JSONPatch");
  EXPECT_EQ(Json::parse(DecodeBase64ForTest(j["response"]["patch"])), resp.patch);
  EXPECT_EQ(j["response"]["warnings"], Json::array({"careful"}));
  EXPECT_FALSE(j["response"].contains("status"));
}

TEST(AdmissionReviewTest, EncodesAnAllowWithoutPatch) {
  AdmissionResponse resp;
  resp.uid = "u2";
  const Json j = Json::parse(EncodeAdmissionReview(resp));
  EXPECT_EQ(j["response"], (Json{{"uid", "u2"}, {"allowed", true}}));
}

TEST(AdmissionReviewTest, EncodesADenial) {
  AdmissionResponse resp;
  resp.uid = "u3";
  resp.allowed = false;
  resp.message = "spec.podSelector overlaps KernelCache \"other\"";
  const Json j = Json::parse(EncodeAdmissionReview(resp));
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["status"]["code"], 403);
  EXPECT_EQ(j["response"]["status"]["reason"], "Forbidden");
  EXPECT_EQ(j["response"]["status"]["message"], resp.message);
  EXPECT_FALSE(j["response"].contains("patch"));
}

TEST(AdmissionReviewTest, InvalidUtf8IsReplacedNotThrown) {
  AdmissionResponse resp;
  resp.uid = "u\xff";
  resp.allowed = false;
  resp.message = "bad \xc3";
  const std::string body = EncodeAdmissionReview(resp);
  EXPECT_FALSE(Json::parse(body, nullptr, false).is_discarded());
  EXPECT_FALSE(Json::parse(ErrorBody("x\xfe"), nullptr, false).is_discarded());
}

}  // namespace
}  // namespace kc::webhook
