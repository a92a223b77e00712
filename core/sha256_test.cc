#include "core/sha256.h"

#include <gtest/gtest.h>

#include <string>

namespace kc::core {
namespace {

// FIPS 180-2 test vectors, whole and fed in pieces.
TEST(Sha256, KnownDigests) {
  struct Case {
    std::string in, want;
  } cases[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Sha256Hex(c.in), c.want) << c.in;
    Sha256 h;
    for (char ch : c.in) h.Update(&ch, 1);
    EXPECT_EQ(h.HexDigest(), c.want) << c.in;
  }
  Sha256 million;
  const std::string a(1000, 'a');
  for (int i = 0; i < 1000; ++i) million.Update(a.data(), a.size());
  EXPECT_EQ(million.HexDigest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
}  // namespace kc::core
