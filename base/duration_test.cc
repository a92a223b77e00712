#include "base/duration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace kc {
namespace {

constexpr int64_t kErr = -1;

// Every form under every syntax: what the CRD (api), the operator's flags
// (flag) and initwarm's flags (initwarm) make of it.
TEST(DurationTest, FormsBySyntax) {
  const std::string many(400, '9');
  struct Case {
    std::string in;
    int64_t api, flag, initwarm;  // seconds, or kErr
  } cases[] = {
      {"24h", 86400, 86400, 86400},
      {"90m", 5400, 5400, 5400},
      {"1h30m", 5400, 5400, 5400},
      {"45s", 45, 45, 45},
      {"0s", 0, 0, 0},
      {"5m", 300, 300, 300},
      {"000000000000000000001s", 1, 1, 1},  // zeros are fine
      {"87600h", 87600LL * 3600, 87600LL * 3600, kErr},
      {"90", kErr, 90, 90},
      {"24", kErr, 24, 24},
      {"1d", kErr, kErr, 86400},
      {"7d", kErr, kErr, 7 * 86400},
      {"1d12h", kErr, kErr, 129600},
      {"366d", kErr, kErr, 366LL * 86400},
      {"367d", kErr, kErr, kErr},
      {"9000h", 9000LL * 3600, 9000LL * 3600, kErr},
      {"", kErr, kErr, kErr},
      {"h", kErr, kErr, kErr},
      {"m", kErr, kErr, kErr},
      {"-1h", kErr, kErr, kErr},
      {"-5s", kErr, kErr, kErr},
      {"-1", kErr, kErr, kErr},
      {"1.5h", kErr, kErr, kErr},
      {"1e9", kErr, kErr, kErr},
      {"1e400", kErr, kErr, kErr},
      {"0x10", kErr, kErr, kErr},
      {" 5", kErr, kErr, kErr},
      {"5 s", kErr, kErr, kErr},
      {"1h30", kErr, kErr, kErr},
      {"5\xC3\xBC", kErr, kErr, kErr},
      {"5\xC3\xBCm", kErr, kErr, kErr},
      {"ten", kErr, kErr, kErr},
      {"999999999h", kErr, kErr, kErr},
      {"87600h1s", kErr, kErr, kErr},
      {"99999999999h", kErr, kErr, kErr},
      {"999999999h999999999h999999999h", kErr, kErr, kErr},
      {"999999999999d", kErr, kErr, kErr},
      {"9999999999999", kErr, kErr, kErr},
      {many, kErr, kErr, kErr},
      {many + "s", kErr, kErr, kErr},
  };
  for (const auto& c : cases) {
    const std::pair<const DurationSyntax*, int64_t> by_syntax[] = {
        {&kApiDurations, c.api}, {&kFlagDurations, c.flag}, {&kInitwarmDurations, c.initwarm}};
    for (const auto& [syntax, want] : by_syntax) {
      const std::string label = c.in.substr(0, 40) + (syntax == &kApiDurations    ? " (api)"
                                                      : syntax == &kFlagDurations ? " (flag)"
                                                                                  : " (initwarm)");
      StatusOr<std::chrono::seconds> d = InternalError("not run");
      EXPECT_NO_THROW(d = ParseDuration(c.in, *syntax)) << label;
      if (want == kErr) {
        ASSERT_FALSE(d.ok()) << label;
        EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << label;
        EXPECT_LT(d.status().message().size(), 200u) << label << ": a hostile value is bounded";
      } else {
        ASSERT_TRUE(d.ok()) << label << ": " << d.status();
        EXPECT_EQ(d->count(), want) << label;
      }
    }
  }
}

TEST(DurationTest, MessagesAndFaults) {
  const std::string many(400, '9');
  struct Case {
    std::string in;
    DurationSyntax syntax;
    DurationFault fault;
    std::string want;  // substring of the message
  } cases[] = {
      {"1d", kApiDurations, DurationFault::kMalformed,
       "malformed duration \"1d\": want whole hours, minutes and seconds, e.g. 24h, 90m, 1h30m"},
      {"soon", kFlagDurations, DurationFault::kMalformed, "want e.g. 90, 45s, 5m, 1h30m"},
      {"x", kInitwarmDurations, DurationFault::kMalformed, "e.g. 90, 45s, 5m, 1h30m, 2d"},
      {"999999999h", kApiDurations, DurationFault::kTooLong,
       "duration \"999999999h\" is too long: at most 87600h"},
      {many + "s", kFlagDurations, DurationFault::kTooLong,
       "duration \"" + many.substr(0, 64) + "...\" is too long"},
      {many, kFlagDurations, DurationFault::kTooLong,
       many.substr(0, 64) + "... seconds is too long"},
      {"999999999999d", kInitwarmDurations, DurationFault::kTooLong, "too long: at most 366d"},
  };
  for (const auto& c : cases) {
    DurationFault fault{};
    auto d = ParseDuration(c.in, c.syntax, &fault);
    ASSERT_FALSE(d.ok()) << c.in.substr(0, 40);
    EXPECT_EQ(fault, c.fault) << c.in.substr(0, 40);
    EXPECT_NE(d.status().message().find(c.want), std::string::npos)
        << c.in.substr(0, 40) << ": " << d.status().message();
  }
}

// The CRD's hostile durations: "too long", never an
// overflow of the nanosecond clock.
TEST(DurationTest, HostileApiDurationsAreTooLong) {
  const std::string many(400, '9');
  for (const std::string& d :
       {std::string("999999999h"), std::string("87600h1s"), many + "s", std::string("99999999999h"),
        std::string("999999999h999999999h999999999h")}) {
    auto v = ParseDuration(d);
    ASSERT_FALSE(v.ok()) << d.substr(0, 40);
    EXPECT_NE(v.status().message().find("too long"), std::string::npos) << v.status();
  }
  EXPECT_EQ(*ParseDuration("87600h"), kMaxDuration);
  EXPECT_EQ(*ParseDuration("000000000000000000001s"), std::chrono::seconds(1)) << "zeros are fine";
}

TEST(DurationTest, Format) {
  struct Case {
    int64_t seconds;
    bool days;
    const char* want;
  } cases[] = {
      {0, false, "0s"},
      {-5, false, "0s"},  // a clock that went back
      {1, false, "1s"},
      {45, false, "45s"},
      {60, false, "1m"},
      {90, false, "1m30s"},
      {120, false, "2m"},
      {130, false, "2m10s"},
      {3600, false, "1h"},
      {3720, false, "1h2m"},
      {3725, false, "1h2m5s"},
      {7200, false, "2h"},
      {86400, false, "24h"},
      {90000, false, "25h"},
      {87600LL * 3600, false, "87600h"},
      {86400, true, "1d"},
      {90000, true, "1d1h"},
      {2 * 86400 + 4 * 3600, true, "2d4h"},
      {366LL * 86400, true, "366d"},
      {45, true, "45s"},
  };
  for (const Case& c : cases) {
    const std::string got = FormatDuration(std::chrono::seconds(c.seconds), c.days);
    EXPECT_EQ(got, c.want) << c.seconds << (c.days ? " with days" : "");
    // What is formatted parses back to itself.
    const DurationSyntax syntax = c.days ? kInitwarmDurations : kApiDurations;
    auto back = ParseDuration(got, syntax);
    ASSERT_TRUE(back.ok()) << got << ": " << back.status();
    EXPECT_EQ(back->count(), std::max<int64_t>(0, c.seconds)) << got;
  }
}

}  // namespace
}  // namespace kc
