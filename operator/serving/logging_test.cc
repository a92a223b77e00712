#include "operator/serving/logging.h"

#include <gtest/gtest.h>

#include <sstream>

namespace kc::op {
namespace {

using Json = nlohmann::json;
const auto kFixed = [] {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(1'800'000'000'123));
};

TEST(LoggingTest, JsonLineCarriesBoundAndCallFields) {
  std::ostringstream out;
  Logger root(&out, true, LogLevel::kInfo, kFixed);
  Logger l = root.With({{"kernelcache", "ml/llama"}, {"reconcileID", "abc"}});
  l.Info("warmup Job created", {{"fingerprint", "3f9a1c2b7d4e5f60"}});
  Json line = Json::parse(out.str());
  EXPECT_EQ(line["ts"], "2027-01-15T08:00:00.123Z");
  EXPECT_EQ(line["level"], "info");
  EXPECT_EQ(line["msg"], "warmup Job created");
  EXPECT_EQ(line["kernelcache"], "ml/llama");
  EXPECT_EQ(line["reconcileID"], "abc");
  EXPECT_EQ(line["fingerprint"], "3f9a1c2b7d4e5f60");
}

TEST(LoggingTest, LevelFilterAndText) {
  std::ostringstream out;
  Logger l(&out, false, LogLevel::kWarn, kFixed);
  l.Info("hidden");
  l.Error("boom", {{"code", 3}, {"why", "x"}});
  EXPECT_EQ(out.str(), "2027-01-15T08:00:00.123Z ERROR boom code=3 why=x\n");
}

TEST(LoggingTest, InvalidUtf8DoesNotThrow) {
  std::ostringstream out;
  Logger l(&out, true, LogLevel::kDebug, kFixed);
  l.Debug("bad \xff byte");
  EXPECT_NO_THROW(Json::parse(out.str()));
}

TEST(LoggingTest, ReconcileIdsAreHexAndDistinct) {
  std::string a = NewReconcileId(), b = NewReconcileId();
  EXPECT_EQ(a.size(), 16u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace
}  // namespace kc::op
