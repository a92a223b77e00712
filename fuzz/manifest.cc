// Fuzz target: manifest.json and READY, the first rung of the validation
// ladder (core/manifest.h, core/validate.h). The input is manifest bytes.
// Properties:
//   - ParseManifest and CheckReadyAndManifest never crash or throw;
//   - a manifest that parses passes CheckManifest, and its JSON parses back
//     to the same manifest (round trip);
//   - READY holding the manifest's digest is accepted exactly when the
//     manifest parses; any other READY (the input's first line) is refused
//     unless it is that digest;
//   - the fingerprint rung (CheckFingerprint) runs on what parsed.
#include "core/manifest.h"

#include <cstddef>
#include <cstdint>

#include "core/fingerprint.h"
#include "core/validate.h"
#include "fuzz/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kc::fuzz::Check;
  const std::string_view bytes = kc::fuzz::AsText(data, size);
  auto m = kc::core::ParseManifest(bytes);
  if (m.ok()) {
    Check(kc::core::CheckManifest(*m).ok());
    auto back = kc::core::ParseManifest(kc::core::ManifestToJson(*m));
    Check(back.ok() && *back == *m);
    // Level 2 on what parsed (the node's facts are the manifest's own).
    (void)kc::core::CheckFingerprint(*m, m->fingerprint_id, m->node ? &*m->node : nullptr);
  }

  const std::string digest = kc::core::Sha256Hex(bytes);
  kc::core::Finding finding;
  auto checked = kc::core::CheckReadyAndManifest(digest + "\n", bytes, &finding);
  Check(checked.ok() == m.ok());

  const std::string ready = kc::fuzz::Split(bytes, '\n', 2)[0];
  auto other = kc::core::CheckReadyAndManifest(ready, bytes, &finding);
  if (other.ok()) Check(m.ok() && ready.substr(0, 64) == digest);
  return 0;
}
