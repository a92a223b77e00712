#include "operator/decide/unschedulable.h"

#include <gtest/gtest.h>

#include "core/api_types.h"

namespace kc::op {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const Time kT0 = api::ParseTime("2026-12-02T10:00:00Z").value();
const std::string kMsg = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.";

PodView Pending(const std::string& name, Time created, std::optional<Time> unschedulable) {
  PodView p;
  p.name = name;
  p.job_name = "llama-warm-x";
  p.phase = "Pending";
  p.created = created;
  p.unschedulable_since = unschedulable;
  if (unschedulable) p.unschedulable_message = kMsg;
  return p;
}

TEST(UnschedulableWarmup, Table) {
  struct Case {
    const char* name;
    std::vector<PodView> pods;
    Time now;
    bool want;
    std::optional<Time> want_wake;
  } cases[] = {
      {"no pod yet", {}, kT0 + minutes(10), false, std::nullopt},
      {"pending, not yet looked at by the scheduler",
       {Pending("p", kT0, std::nullopt)},
       kT0 + minutes(10),
       false,
       std::nullopt},
      {"unschedulable, inside the grace: wake at its end",
       {Pending("p", kT0, kT0)},
       kT0 + seconds(30),
       false,
       kT0 + minutes(2)},
      {"unschedulable exactly the grace",
       {Pending("p", kT0, kT0)},
       kT0 + minutes(2),
       true,
       std::nullopt},
      {"unschedulable past the grace",
       {Pending("p", kT0, kT0 + seconds(5))},
       kT0 + minutes(5),
       true,
       std::nullopt},
      {"bound to a node (preemption made room)",
       {[] {
         PodView p = Pending("p", kT0, kT0);
         p.node_name = "gpu-1";
         return p;
       }()},
       kT0 + minutes(5),
       false,
       std::nullopt},
      {"failed pod is not waiting for a node",
       {[] {
         PodView p = Pending("p", kT0, kT0);
         p.phase = "Failed";
         return p;
       }()},
       kT0 + minutes(5),
       false,
       std::nullopt},
      {"only the newest pod counts: an old unschedulable one, a new one scheduled",
       {Pending("old", kT0, kT0),
        [] {
          PodView p = Pending("new", kT0 + minutes(1), std::nullopt);
          p.node_name = "gpu-1";
          p.phase = "Running";
          return p;
        }()},
       kT0 + minutes(5),
       false,
       std::nullopt},
      {"another Job's pod does not count",
       {[] {
         PodView p = Pending("p", kT0, kT0);
         p.job_name = "other";
         return p;
       }()},
       kT0 + minutes(5),
       false,
       std::nullopt},
  };
  for (const auto& c : cases) {
    std::optional<Time> wake;
    auto u = FindUnschedulableWarmup("llama-warm-x", c.pods, c.now, minutes(2), &wake);
    EXPECT_EQ(u.has_value(), c.want) << c.name;
    EXPECT_EQ(wake, c.want_wake) << c.name;
    if (u) {
      EXPECT_EQ(u->message, kMsg) << c.name;
      EXPECT_GE(u->for_how_long, minutes(2)) << c.name;
      EXPECT_FALSE(u->pod.empty()) << c.name;
    }
  }
  EXPECT_FALSE(FindUnschedulableWarmup("", {Pending("p", kT0, kT0)}, kT0 + minutes(5), minutes(2))
                   .has_value());
}

}  // namespace
}  // namespace kc::op
