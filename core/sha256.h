// SHA-256, the one digest of the project (manifest entries, READY, the
// fingerprint's canonical JSON), as lower-case hex. OpenSSL's SHA-256
// functions, not its EVP layer: EVP loads providers, which pulls dlopen and
// the resolver into every static program that hashes (the fully static
// kc-converge among them). The same assembly (SHA-NI where the CPU has it)
// runs either way.
#pragma once

#include <openssl/sha.h>

#include <string>
#include <string_view>

namespace kc::core {

// An incremental digest: Update as the bytes come, then HexDigest once.
class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t n);
  std::string HexDigest();  // 64 lower-case hex digits; ends the digest

 private:
  SHA256_CTX ctx_;
};

// The digest of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace kc::core
