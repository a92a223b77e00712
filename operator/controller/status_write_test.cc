#include "operator/controller/status_write.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kc::op {
namespace {

using std::chrono::milliseconds;

TEST(DecideStatusWriteTest, Table) {
  const Time t0 = Time{} + std::chrono::hours(1000);
  const Time in_window = t0 + milliseconds(500);
  const Time window_end = t0 + kStatusCoalesceWindow;
  struct Case {
    std::string name;
    StatusWriteInputs in;
    StatusWrite want;
    Time want_due{};
  };
  const std::vector<Case> cases = {
      {"unchanged: nothing", {false, false, false, std::nullopt, t0}, StatusWrite::kNothing},
      {"unchanged after a Job write: nothing",
       {false, false, true, std::nullopt, t0},
       StatusWrite::kNothing},
      {"owed, and the pass decides what the server holds: nothing",
       {false, false, false, t0, in_window},
       StatusWrite::kNothing},
      {"going: nothing", {true, true, true, std::nullopt, t0}, StatusWrite::kNothing},
      {"changed, no Job written, nothing owed: now",
       {true, false, false, std::nullopt, t0},
       StatusWrite::kNow},
      {"a Job written: put off for the window",
       {true, false, true, std::nullopt, t0},
       StatusWrite::kPutOff,
       window_end},
      {"owed, in the window: put off to its end",
       {true, false, false, t0, in_window},
       StatusWrite::kPutOff,
       window_end},
      {"owed, a Job written again in the window: the window does not grow",
       {true, false, true, t0, in_window},
       StatusWrite::kPutOff,
       window_end},
      {"owed, the window over: now", {true, false, false, t0, window_end}, StatusWrite::kNow},
      {"owed, the window over, a Job written: now",
       {true, false, true, t0, window_end},
       StatusWrite::kNow},
      {"owed since later than now (a clock step back): put off to its end",
       {true, false, false, t0, t0 - milliseconds(1)},
       StatusWrite::kPutOff,
       window_end},
      {"no window: a Job written, now",
       {true, false, true, std::nullopt, t0, milliseconds(0)},
       StatusWrite::kNow},
      {"no window, owed: now", {true, false, false, t0, t0, milliseconds(0)}, StatusWrite::kNow},
  };
  for (const Case& c : cases) {
    const StatusWriteDecision d = DecideStatusWrite(c.in);
    EXPECT_EQ(d.what, c.want) << c.name;
    if (c.want == StatusWrite::kPutOff) {
      EXPECT_EQ(d.due, c.want_due) << c.name;
      EXPECT_EQ(d.owed_since, c.in.owed_since.value_or(c.in.now)) << c.name;
    }
  }
}

}  // namespace
}  // namespace kc::op
