#include "initwarm/cache/quarantine_rule.h"

#include <gtest/gtest.h>

#include <string>

namespace kc::initwarm {
namespace {

TEST(DecideQuarantine, Table) {
  using D = QuarantineDecision;
  struct Case {
    std::string name;
    QuarantineFacts facts;
    D want;
  } cases[] = {
      {"a bad published cache", {}, D::kQuarantine},
      {"a directory given by path", {.published_dir = false}, D::kNotPublishedDir},
      {"quarantine off", {.asked = false}, D::kNotAsked},
      {"READY absent: still publishing", {.ready_absent = true}, D::kStillPublishing},
      {"v1/ a planted symlink", {.version_dir_real = false}, D::kVersionDirUnsafe},
      {"by path wins over everything",
       {.published_dir = false, .asked = false, .ready_absent = true, .version_dir_real = false},
       D::kNotPublishedDir},
      {"still publishing before an unsafe v1/",
       {.ready_absent = true, .version_dir_real = false},
       D::kStillPublishing},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(QuarantineDecisionName(DecideQuarantine(c.facts)), QuarantineDecisionName(c.want))
        << c.name;
  }
}

}  // namespace
}  // namespace kc::initwarm
