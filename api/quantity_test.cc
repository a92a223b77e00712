#include "api/quantity.h"

#include <gtest/gtest.h>

#include <string>

namespace kc::api {
namespace {

// Moved from core/api_types_test.cc (ApiTypes.Quantities).
TEST(QuantityTest, Quantities) {
  struct Case {
    const char* in;
    int64_t bytes;  // -1: error
  } cases[] = {
      {"0", 0},
      {"1024", 1024},
      {"1Ki", 1024},
      {"20Gi", 21474836480},
      {"1.5Gi", 1610612736},
      {"10G", 10000000000},
      {"500M", 500000000},
      {"1k", 1000},
      {"", -1},
      {"Gi", -1},
      {"1.Gi", -1},
      {"-1Gi", -1},
      {"1 Gi", -1},
      {"1gi", -1},
      {"1m", -1},
  };
  for (const auto& c : cases) {
    auto b = ParseQuantityBytes(c.in);
    if (c.bytes < 0) {
      EXPECT_FALSE(b.ok()) << c.in;
    } else {
      ASSERT_TRUE(b.ok()) << c.in;
      EXPECT_EQ(*b, c.bytes) << c.in;
    }
  }
}

// Moved from core/api_types_test.cc (ApiTypes.FormatBytes).
TEST(QuantityTest, FormatBytes) {
  EXPECT_EQ(FormatBytes(0), "0");
  EXPECT_EQ(FormatBytes(1023), "1023");
  EXPECT_EQ(FormatBytes(1024), "1Ki");
  EXPECT_EQ(FormatBytes(1288490189), "1.2Gi");
  EXPECT_EQ(FormatBytes(21474836480), "20Gi");
}

// Moved from core/api_types_test.cc (ApiTypes.HostileScalarsAreErrorsNotExceptions):
// errors, never an exception (std::stod threw out_of_range
// on 400 digits) nor an overflow of int64 bytes.
TEST(QuantityTest, HostileQuantitiesAreErrorsNotExceptions) {
  const std::string many(400, '9');
  for (const std::string& q :
       {many, many + "Gi", "0." + std::string(400, '0') + "1Ki", std::string("9999999999999999Gi"),
        std::string("8Ei"), std::string("9223372036854775808"), std::string("1e400")}) {
    StatusOr<int64_t> b = InternalError("not run");
    EXPECT_NO_THROW(b = ParseQuantityBytes(q)) << q.substr(0, 40);
    if (q.rfind("0.", 0) == 0) {
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_EQ(*b, 1);  // rounded up, exactly
    } else {
      ASSERT_FALSE(b.ok()) << q.substr(0, 40);
      EXPECT_LT(b.status().message().size(), 200u);
    }
  }
  EXPECT_EQ(*ParseQuantityBytes("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(*ParseQuantityBytes("7.999Ei"), 9222219115350168962);
  EXPECT_EQ(*ParseQuantityBytes("0.1"), 1);
  EXPECT_EQ(*ParseQuantityBytes("1.0000000000000000000001Ki"), 1025);
}

}  // namespace
}  // namespace kc::api
