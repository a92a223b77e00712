#include "api/time.h"

#include <gtest/gtest.h>

#include <vector>

namespace kc::api {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

TEST(TimeTest, FormatsSecondsAndMicros) {
  const Time t = Time(seconds(1764667895)) + microseconds(123456);  // 2025-12-02
  EXPECT_EQ(FormatTime(t), "2025-12-02T09:31:35Z");
  EXPECT_EQ(FormatMicroTime(t), "2025-12-02T09:31:35.123456Z");
  EXPECT_EQ(FormatMicroTime(Time(seconds(0))), "1970-01-01T00:00:00.000000Z");
}

TEST(TimeTest, ParseTable) {
  struct Case {
    std::string text;
    bool ok;
    int64_t micros_since_epoch;
  };
  const std::vector<Case> cases = {
      {"2025-12-02T09:31:35Z", true, 1764667895000000},
      {"2025-12-02T09:31:35.123456Z", true, 1764667895123456},
      {"2025-12-02T09:31:35.5Z", true, 1764667895500000},
      {"2025-12-02T09:31:35.123456789Z", true, 1764667895123456},
      {"2025-12-02T10:31:35+01:00", true, 1764667895000000},
      {"2025-12-02T08:01:35-01:30", true, 1764667895000000},
      {"2024-02-29T00:00:00Z", true, 1709164800000000},
      {"2025-12-02 09:31:35Z", false, 0},
      {"2025-12-02T09:31:35", false, 0},
      {"2025-13-02T09:31:35Z", false, 0},
      {"2025-12-02T09:31:35.Z", false, 0},
      {"2025-12-02T09:31:35Zjunk", false, 0},
      {"", false, 0},
  };
  for (const auto& c : cases) {
    auto got = ParseTime(c.text);
    EXPECT_EQ(got.ok(), c.ok) << c.text << " " << got.status();
    if (c.ok && got.ok()) {
      EXPECT_EQ(std::chrono::duration_cast<microseconds>(got->time_since_epoch()).count(),
                c.micros_since_epoch)
          << c.text;
    }
    if (!c.ok && !got.ok()) {
      EXPECT_NE(got.status().message().find(c.text), std::string::npos);
    }
  }
}

TEST(TimeTest, RoundTripsMicroTime) {
  const Time t = Time(seconds(1800000000)) + microseconds(42);
  auto back = ParseTime(FormatMicroTime(t));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, t);
}

// Moved from core/api_types_test.cc (ApiTypes.Times).
TEST(TimeTest, ParseThenFormatSeconds) {
  struct Case {
    const char* in;
    const char* out;  // nullptr: error
  } cases[] = {
      {"2026-12-02T09:33:17Z", "2026-12-02T09:33:17Z"},
      {"2026-12-02T09:33:17.123456Z", "2026-12-02T09:33:17Z"},
      {"2026-12-02T10:33:17+01:00", "2026-12-02T09:33:17Z"},
      {"2026-12-02T08:03:17-01:30", "2026-12-02T09:33:17Z"},
      {"2026-12-02 09:33:17Z", nullptr},
      {"2026-13-02T09:33:17Z", nullptr},
      {"2026-12-02T09:33:17", nullptr},
      {"yesterday", nullptr},
  };
  for (const auto& c : cases) {
    auto t = ParseTime(c.in);
    if (c.out == nullptr) {
      EXPECT_FALSE(t.ok()) << c.in;
    } else {
      ASSERT_TRUE(t.ok()) << c.in << ": " << t.status();
      EXPECT_EQ(FormatTime(*t), c.out) << c.in;
    }
  }
}

// Moved from core/api_types_test.cc (ApiTypes.HostileScalarsAreErrorsNotExceptions):
// a far-away time is an error, never an overflow of the nanosecond clock.
TEST(TimeTest, FarAwayYearsAreOutOfRange) {
  for (const char* t : {"9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "2263-01-01T00:00:00Z",
                        "1600-01-01T00:00:00Z"}) {
    auto v = ParseTime(t);
    ASSERT_FALSE(v.ok()) << t;
    EXPECT_NE(v.status().message().find("out of range"), std::string::npos) << v.status();
  }
  EXPECT_TRUE(ParseTime("2200-12-31T23:59:59Z").ok());
}

TEST(TimeTest, UnixSeconds) {
  EXPECT_EQ(FormatTime(FromUnixSeconds(1796204136)), "2026-12-02T09:35:36Z");
  auto t = ParseTime("2026-12-02T09:35:36Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(ToUnixSeconds(*t), 1796204136);
  EXPECT_EQ(ToUnixSeconds(*t + std::chrono::milliseconds(999)), 1796204136);
}

}  // namespace
}  // namespace kc::api
