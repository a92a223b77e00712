#include "base/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace kc {
namespace {

TEST(TruncateUtf8Test, ShortStringsAreUnchanged) {
  EXPECT_EQ(TruncateUtf8("", 10), "");
  EXPECT_EQ(TruncateUtf8("abc", 3), "abc");
  EXPECT_EQ(TruncateUtf8("abcdef", 5), "ab...");
}

// Cutting at every byte of multi-byte characters always leaves valid UTF-8
// that nlohmann::json serialises (a raw substr left a partial character
// and dump() threw type_error 316).
TEST(TruncateUtf8Test, NeverSplitsACharacter) {
  const std::string text =
      "x\xC3\xBC\xE2\x82\xAC\xF0\x9F\x94\xA5yz\xE6\x97\xA5\xE6\x9C\xAC";  // xü€🔥yz日本
  for (size_t max = 3; max <= text.size() + 1; ++max) {
    const std::string cut = TruncateUtf8(text, max);
    EXPECT_LE(cut.size(), std::max<size_t>(max, 3)) << max;
    EXPECT_NO_THROW((void)nlohmann::json(cut).dump()) << max;
    EXPECT_TRUE(text.rfind(cut.substr(0, cut.size() - 3), 0) == 0 || cut == text) << max;
  }
  EXPECT_EQ(TruncateUtf8(text, 5), "x...");  // ü would leave room for half of €
}

// IsValidUtf8 says true exactly where nlohmann::json serialises the bytes.
TEST(IsValidUtf8Test, AgreesWithTheJsonSerialiser) {
  const std::vector<std::pair<std::string, bool>> cases = {
      {"", true},
      {"triton/aa/k.cubin", true},
      {"x\xC3\xBC\xE2\x82\xAC\xF0\x9F\x94\xA5", true},  // ü € 🔥
      {"\xFF", false},                                  // never a UTF-8 byte
      {"\xC3", false},                                  // cut short
      {"\xC0\xAF", false},                              // overlong '/'
      {"\xED\xA0\x80", false},                          // a surrogate
      {"\xF4\x90\x80\x80", false},                      // above U+10FFFF
      {"a\x80"
       "b",
       false},  // a lone continuation byte
  };
  for (const auto& [text, valid] : cases) {
    EXPECT_EQ(IsValidUtf8(text), valid)
        << nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    bool dumps = true;
    try {
      (void)nlohmann::json(text).dump();
    } catch (const nlohmann::json::exception&) {
      dumps = false;
    }
    EXPECT_EQ(dumps, valid);
  }
}

}  // namespace
}  // namespace kc
