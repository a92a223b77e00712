#include "core/consume.h"

#include <gtest/gtest.h>

#include <string>

namespace kc::core {
namespace {

TEST(Consume, EveryModeRoundTripsThroughItsName) {
  for (ConsumeMode m : {ConsumeMode::kCopy, ConsumeMode::kShared, ConsumeMode::kSharedReadWrite}) {
    auto back = ParseConsumeMode(ConsumeModeName(m));
    ASSERT_TRUE(back.ok()) << ConsumeModeName(m) << ": " << back.status();
    EXPECT_EQ(*back, m);
  }
  for (OnTimeout t : {OnTimeout::kFail, OnTimeout::kStartCold}) {
    auto back = ParseOnTimeout(OnTimeoutName(t));
    ASSERT_TRUE(back.ok()) << OnTimeoutName(t) << ": " << back.status();
    EXPECT_EQ(*back, t);
  }
}

TEST(Consume, UnknownNamesAreRefusedQuotingTheValueAndTheChoices) {
  struct Case {
    std::string value;
    bool mode;  // else on-timeout
    std::string want;
  };
  const Case cases[] = {
      {"Link", true, "\"Link\" is not one of Copy, Shared, SharedReadWrite"},
      {"copy", true, "\"copy\" is not one of"},  // exact names: the API's enum
      {"", true, "\"\" is not one of"},
      {"Retry", false, "\"Retry\" is not one of Fail, StartCold"},
      {std::string(500, 'x'), false, "\"" + std::string(64, 'x') + "\" is not one of"},
  };
  for (const Case& c : cases) {
    const Status s = c.mode ? ParseConsumeMode(c.value).status() : ParseOnTimeout(c.value).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.value;
    EXPECT_NE(s.message().find(c.want), std::string::npos) << s.message();
  }
}

// The defaults are the CRD's (crds/kernelcache.kernelcache.io.yaml; the
// operator's crd_test checks the CRD against ConsumeSpec's defaults).
TEST(Consume, DefaultsAreTheApis) {
  EXPECT_EQ(ConsumeModeName(kDefaultConsumeMode), "Copy");
  EXPECT_EQ(OnTimeoutName(kDefaultOnTimeout), "Fail");
  EXPECT_EQ(LevelName(kDefaultVerifyLevel), "Manifest");
  EXPECT_EQ(kDefaultWaitTimeoutSeconds, 900);
}

}  // namespace
}  // namespace kc::core
