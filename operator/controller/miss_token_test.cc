#include "operator/controller/miss_token.h"

#include <gtest/gtest.h>

#include "core/miss_channel.h"
#include "operator/testing/objects.h"

namespace kc::op {
namespace {

const Time kNow = Time{} + std::chrono::seconds(1'800'000'000);

Json Claims() { return fixtures::PodTokenClaims("ml", "p1", "u1", 1'800'000'600); }

std::string Jwt(const Json& claims) { return fixtures::PodTokenJwt(claims); }

// The token with "==" after its payload part.
std::string PaddedPayload(std::string jwt) { return jwt.insert(jwt.rfind('.'), "=="); }

TEST(MissToken, ClaimsOfAPodBoundTokenForOurAudience) {
  auto c = ClaimsOfMissToken(Jwt(Claims()), kNow);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(*c, (TokenClaims{"ml", "p1", "u1", Time{} + std::chrono::seconds(1'800'000'600)}));
  Json one_audience = Claims();
  one_audience["aud"] = core::kMissTokenAudience;
  EXPECT_TRUE(ClaimsOfMissToken(Jwt(one_audience), kNow).ok()) << "\"aud\" may be a string";
}

TEST(MissToken, RefusesWhatCouldNeverPassTheReview) {
  auto with = [](const char* key, const Json& v) {
    Json c = Claims();
    c[key] = v;
    return Jwt(c);
  };
  Json no_pod = Claims();
  no_pod["kubernetes.io"].erase("pod");
  Json no_ns = Claims();
  no_ns["kubernetes.io"].erase("namespace");
  Json no_exp = Claims();
  no_exp.erase("exp");
  struct Case {
    const char* name;
    std::string token;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"empty", "", "not a JWT"},
      {"junk", "abc", "not a JWT"},
      {"two parts", "a.b", "not a JWT"},
      {"four parts", "a.b.c.d", "not a JWT"},
      {"empty payload part", "a..c", "not a JWT"},
      {"payload not base64url", "a.%%%.c", "not base64url"},
      {"standard base64 padding", PaddedPayload(Jwt(Claims())), "not base64url"},
      {"payload not JSON", "a.bm90IGpzb24.c", "not a JSON object"},
      {"payload a JSON array", "a.WzFd.c", "not a JSON object"},
      {"another audience", with("aud", Json::array({"https://kubernetes.default.svc"})),
       "another audience"},
      {"audience not a string", with("aud", 7), "another audience"},
      {"no expiry", Jwt(no_exp), "no expiry"},
      {"expiry a string", with("exp", "1800000600"), "no expiry"},
      {"expiry negative", with("exp", -5), "no expiry"},
      {"expiry past any clock", with("exp", std::uint64_t{1} << 62), "no expiry"},
      {"expired", with("exp", 1'799'999'999), "has expired"},
      {"expires now", with("exp", 1'800'000'000), "has expired"},
      {"not bound to a pod", Jwt(no_pod), "not bound to a pod"},
      {"no namespace", Jwt(no_ns), "not bound to a pod"},
      {"kubernetes.io not an object", with("kubernetes.io", "ml"), "not bound to a pod"},
      {"too large", std::string(kMaxMissTokenBytes + 1, 'a'), "bytes (at most"},
  };
  for (const Case& c : cases) {
    auto got = ClaimsOfMissToken(c.token, kNow);
    EXPECT_EQ(got.status().code(), StatusCode::kUnauthenticated) << c.name;
    EXPECT_NE(got.status().message().find(c.says), std::string::npos)
        << c.name << ": " << got.status().message();
  }
}

}  // namespace
}  // namespace kc::op
