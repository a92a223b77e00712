#include "kube/wall_time.h"

#include <gtest/gtest.h>

#include <vector>

namespace kc::kube {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

TEST(WallTimeTest, FormatsSecondsAndMicros) {
  const WallTime t = WallTime(seconds(1764667895)) + microseconds(123456);  // 2025-12-02
  EXPECT_EQ(FormatRfc3339(t), "2025-12-02T09:31:35Z");
  EXPECT_EQ(FormatMicroTime(t), "2025-12-02T09:31:35.123456Z");
  EXPECT_EQ(FormatMicroTime(WallTime(seconds(0))), "1970-01-01T00:00:00.000000Z");
}

TEST(WallTimeTest, ParseTable) {
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
    auto got = ParseApiTime(c.text);
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

TEST(WallTimeTest, RoundTripsMicroTime) {
  const WallTime t = WallTime(seconds(1800000000)) + microseconds(42);
  auto back = ParseApiTime(FormatMicroTime(t));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, t);
}

}  // namespace
}  // namespace kc::kube
