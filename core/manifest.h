// Manifest: what a published cache holds, as written to manifest.json.
//
//   {
//     "schema": 1,
//     "fingerprint": {"id": "3f9a1c2b7d4e5f60", "sha256": "<64 hex>" | "",
//                     "node": {"gpuProduct","computeCapability","driver","cudaDriver","arch"},
//                     "runtime": {"image","versions":{..},"env":{..}}},   (node/runtime optional)
//     "frameworks": {"triton": "3.6.0", ...},     detected in the cache, may be empty
//     "files": [{"path": "triton/ab/k.cubin", "size": 123, "sha256": "<64 hex>"}, ...],
//     "links": [{"path": "...", "target": "..."}],                       optional
//     "totals": {"files": N, "bytes": B},
//     "createdAt": "2026-12-02T09:40:00Z",
//     "producer": {"owner": "<job uid>", "host": "<hostname>"}            optional
//   }
//
// Files are sorted by path, unique, and every path passes
// CheckRelativePath. Totals equal the sums over files. When node and
// runtime inputs are present, ComputeFingerprint(node, runtime) must give
// fingerprint.id. ParseManifest is strict: unknown keys, wrong types,
// missing fields and inconsistent totals are InvalidArgument naming the
// field ("files[3].sha256: ..."). The READY file holds
// Sha256Hex(<manifest.json bytes>). Pure: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/fingerprint.h"

namespace kc::core {

inline constexpr int kManifestSchemaVersion = 1;

// What a manifest may hold, so that reading one costs a bounded amount of
// memory whoever wrote it: its bytes, and its files and links together
// (CheckManifest refuses more, so seal never writes what a gate refuses).
// ParseManifest scans the text against these (core/json_bounds.h) before
// it builds anything.
inline constexpr std::uint64_t kMaxManifestBytes = 64ull << 20;
inline constexpr std::size_t kMaxManifestEntries = 200'000;
inline constexpr int kMaxManifestDepth = 8;

struct ManifestFile {
  std::string path;  // relative to the fingerprint directory
  std::uint64_t size = 0;
  std::string sha256;  // 64 lower-case hex digits
  friend bool operator==(const ManifestFile&, const ManifestFile&) = default;
};

struct ManifestLink {
  std::string path;
  std::string target;  // as readlink returns it; must stay inside the cache
  friend bool operator==(const ManifestLink&, const ManifestLink&) = default;
};

struct Manifest {
  int schema = kManifestSchemaVersion;
  std::string fingerprint_id;
  std::string fingerprint_sha256;  // may be empty when inputs are unknown
  std::optional<NodeFacts> node;
  std::optional<RuntimeFacts> runtime;
  std::map<std::string, std::string> frameworks;
  std::vector<ManifestFile> files;
  std::vector<ManifestLink> links;
  std::uint64_t total_files = 0;
  std::uint64_t total_bytes = 0;
  std::string created_at;  // RFC 3339 UTC
  std::string producer_owner;
  std::string producer_host;
  friend bool operator==(const Manifest&, const Manifest&) = default;
};

// Sorts files and links by path and sets the totals.
void FinalizeManifest(Manifest* m);

// Pretty JSON (2-space indent, keys sorted, trailing newline). Deterministic.
std::string ManifestToJson(const Manifest& m);

StatusOr<Manifest> ParseManifest(std::string_view json);

// Checks the invariants listed above on an in-memory manifest.
Status CheckManifest(const Manifest& m);

// NodeFacts as {"arch","computeCapability","cudaDriver","driver","gpuProduct"}
// (the spelling the resolve endpoint and `initwarm probe` use).
std::string NodeFactsToJson(const NodeFacts& n);
StatusOr<NodeFacts> ParseNodeFacts(std::string_view json);
// RuntimeFacts as {"image","versions":{},"env":{},"schema":1}; schema optional.
std::string RuntimeFactsToJson(const RuntimeFacts& r);
StatusOr<RuntimeFacts> ParseRuntimeFacts(std::string_view json);

// True for 64 lower-case hex digits.
bool IsSha256Hex(std::string_view s);

// "2026-12-02T09:40:00Z" for a unix time, and back (InvalidArgument if
// malformed): api/time.h in whole seconds, for the manifest's createdAt.
std::string Rfc3339(std::int64_t unix_seconds);
StatusOr<std::int64_t> ParseRfc3339(std::string_view s);

}  // namespace kc::core
