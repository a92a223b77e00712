#include "operator/decide/names.h"

#include <gtest/gtest.h>

namespace kc::op {
namespace {

TEST(Names, WarmupJobShortName) {
  EXPECT_EQ(WarmupJobName("llama", "3f9a1c2b7d4e5f60"), "llama-warm-3f9a1c2b7d4e5f60");
  EXPECT_EQ(WarmupJobName("llama", "3f9a1c2b7d4e5f60", 2), "llama-warm-3f9a1c2b7d4e5f60-g2");
}

TEST(Names, LongNamesFitAndDoNotCollide) {
  const std::string a(70, 'a');
  const std::string b = std::string(60, 'a') + std::string(10, 'b');
  const std::string na = WarmupJobName(a, "3f9a1c2b7d4e5f60", 12);
  const std::string nb = WarmupJobName(b, "3f9a1c2b7d4e5f60", 12);
  EXPECT_LE(na.size(), kMaxJobName);
  EXPECT_LE(nb.size(), kMaxJobName);
  EXPECT_NE(na, nb);
  EXPECT_TRUE(na.ends_with("-warm-3f9a1c2b7d4e5f60-g12")) << na;
  EXPECT_EQ(na, WarmupJobName(a, "3f9a1c2b7d4e5f60", 12));  // deterministic
}

TEST(Names, CutNeverLeavesDashBeforeHash) {
  const std::string name = std::string(40, 'x') + "-" + std::string(40, 'y');
  const std::string n = WarmupJobName(name, "0123456789abcdef");
  EXPECT_LE(n.size(), kMaxJobName);
  EXPECT_EQ(n.find("--"), std::string::npos) << n;
}

TEST(Names, GcJobNameIgnoresOrder) {
  EXPECT_EQ(GcJobName("llama", {"b", "a"}), GcJobName("llama", {"a", "b"}));
  EXPECT_NE(GcJobName("llama", {"a"}), GcJobName("llama", {"a", "b"}));
  EXPECT_TRUE(GcJobName("llama", {"a"}).starts_with("llama-gc-"));
  EXPECT_LE(GcJobName(std::string(80, 'z'), {"a"}).size(), kMaxJobName);
}

TEST(Names, Pvc) { EXPECT_EQ(PvcName("llama"), "llama-cache"); }

}  // namespace
}  // namespace kc::op
