#include "initwarm/cache/staged_check.h"

#include <gtest/gtest.h>

#include <functional>

namespace kc::initwarm {
namespace {

const std::string kA(64, 'a');
const std::string kB(64, 'b');

ExpectedTree Want() {
  return {{{"triton/x/k.cubin", 10, kA}, {"triton/x/k.json", 3, kB}}, {{"triton/y", "x"}}};
}

struct Staged {
  WalkResult walk;
  std::vector<std::string> sums;
};

Staged AsVerified() {
  Staged s;
  s.walk.files = {{"triton/x/k.cubin", 10}, {"triton/x/k.json", 3}};
  s.walk.links = {{"triton/y", "x"}};
  s.sums = {kA, kB};
  return s;
}

TEST(StagedCheck, SealsOnlyWhatWasVerified) {
  EXPECT_TRUE(CheckStagedAsExpected(Want(), AsVerified().walk, AsVerified().sums).ok());
  struct Case {
    const char* name;
    std::function<void(Staged&)> edit;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"an extra file",
       [](Staged& s) {
         s.walk.files.push_back({"triton/z/evil.cubin", 5});
         s.sums.push_back(kA);
       },
       "triton/z/evil.cubin is there and was not verified"},
      {"a file rewritten with the same size", [](Staged& s) { s.sums[0] = std::string(64, 'c'); },
       "triton/x/k.cubin has other bytes"},
      {"a file grown", [](Staged& s) { s.walk.files[1].size = 4; }, "triton/x/k.json has other"},
      {"a file removed",
       [](Staged& s) {
         s.walk.files.pop_back();
         s.sums.pop_back();
       },
       "triton/x/k.json was verified and is gone"},
      {"an extra link",
       [](Staged& s) {
         s.walk.links.push_back({"triton/w", "x"});
       },
       "triton/w is a link that was not verified"},
      {"a link retargeted", [](Staged& s) { s.walk.links[0].target = "../x"; },
       "triton/y links elsewhere"},
      {"a link removed", [](Staged& s) { s.walk.links.clear(); },
       "triton/y was a verified link and is gone"},
  };
  for (const Case& c : cases) {
    Staged s = AsVerified();
    c.edit(s);
    Status st = CheckStagedAsExpected(Want(), s.walk, s.sums);
    EXPECT_EQ(st.code(), StatusCode::kDataLoss) << c.name;
    EXPECT_NE(st.message().find(c.says), std::string::npos) << c.name << ": " << st.message();
  }
}

}  // namespace
}  // namespace kc::initwarm
