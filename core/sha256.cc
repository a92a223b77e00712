// The 1.1.x names of the SHA-256 functions (deprecated, not removed, in
// OpenSSL 3): see sha256.h for why not EVP.
#define OPENSSL_API_COMPAT 0x10100000L

#include "core/sha256.h"

namespace kc::core {

Sha256::Sha256() { SHA256_Init(&ctx_); }

void Sha256::Update(const void* data, size_t n) { SHA256_Update(&ctx_, data, n); }

std::string Sha256::HexDigest() {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256_Final(md, &ctx_);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char b : md) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(data.data(), data.size());
  return h.HexDigest();
}

}  // namespace kc::core
