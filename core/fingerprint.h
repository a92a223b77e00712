// Fingerprint: which caches are interchangeable.
//
// A cache directory is valid only where every input that shapes compiled
// kernels is the same: the node part (GPU product, compute capability,
// NVIDIA driver version, CUDA driver API version, CPU arch) and the runtime
// part (model image, declared framework versions, cache-affecting
// environment, layout schema). The fingerprint is sha256 over the canonical
// JSON of both parts; its id is the first 16 hex digits.
//
// The node part is read from GPU Feature Discovery labels by the operator
// (NodeFactsFromLabels) and from NVML/libcuda by `initwarm probe`; both spell
// the facts the way GFD does, so one machine gives one fingerprint.
// Pure: no I/O.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/sha256.h"  // Sha256Hex, for its users

namespace kc::core {

// Schema version of the on-volume layout (v1/<fingerprint>/...). Part of
// every fingerprint, so a layout change never reuses an old cache; it
// changes only with a migration (core/layout_migrations.h).
inline constexpr int kLayoutSchemaVersion = 1;

struct NodeFacts {
  std::string gpu_product;  // GFD spelling: "NVIDIA-H200", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"
  std::string compute_capability;   // "9.0"
  std::string driver_version;       // NVIDIA driver: "580.159.04"
  std::string cuda_driver_version;  // CUDA driver API: "13.0"
  std::string arch;                 // "amd64", "arm64"
  friend bool operator==(const NodeFacts&, const NodeFacts&) = default;
};

struct RuntimeFacts {
  std::string image;                           // model image, digest-pinned preferably
  std::map<std::string, std::string> runtime;  // {"pytorch": "2.11.0", "triton": "3.6.0"}
  std::map<std::string, std::string> env;      // cache-affecting environment
  int schema_version = kLayoutSchemaVersion;
  // Inputs added with the server form of the warmup, written only when set
  // (canonical_json.h): GPUs one server uses (1 = the command form's), its
  // declared parallel layout ({"tensor": 4, "pipeline": 1}), and the sha256
  // of the server's command and args.
  int64_t gpus = 1;
  std::map<std::string, int64_t> parallel{};
  std::string server{};
  friend bool operator==(const RuntimeFacts&, const RuntimeFacts&) = default;
};

struct Fingerprint {
  std::string id;              // first 16 hex digits of sha256
  std::string sha256;          // all 64 hex digits
  std::string canonical_json;  // the exact bytes hashed
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};

// Node labels GFD writes (current and deprecated names).
namespace labels {
inline constexpr std::string_view kGpuProduct = "nvidia.com/gpu.product";
inline constexpr std::string_view kComputeMajor = "nvidia.com/gpu.compute.major";
inline constexpr std::string_view kComputeMinor = "nvidia.com/gpu.compute.minor";
inline constexpr std::string_view kDriverFull = "nvidia.com/cuda.driver-version.full";
inline constexpr std::string_view kDriverMajor = "nvidia.com/cuda.driver-version.major";
inline constexpr std::string_view kDriverMinor = "nvidia.com/cuda.driver-version.minor";
inline constexpr std::string_view kDriverRevision = "nvidia.com/cuda.driver-version.revision";
inline constexpr std::string_view kRuntimeFull = "nvidia.com/cuda.runtime-version.full";
inline constexpr std::string_view kRuntimeMajor = "nvidia.com/cuda.runtime-version.major";
inline constexpr std::string_view kRuntimeMinor = "nvidia.com/cuda.runtime-version.minor";
// Deprecated spellings (GFD before v0.15), still on many clusters.
inline constexpr std::string_view kOldDriverMajor = "nvidia.com/cuda.driver.major";
inline constexpr std::string_view kOldDriverMinor = "nvidia.com/cuda.driver.minor";
inline constexpr std::string_view kOldDriverRev = "nvidia.com/cuda.driver.rev";
inline constexpr std::string_view kOldRuntimeMajor = "nvidia.com/cuda.runtime.major";
inline constexpr std::string_view kOldRuntimeMinor = "nvidia.com/cuda.runtime.minor";
inline constexpr std::string_view kArch = "kubernetes.io/arch";
inline constexpr std::string_view kGpuPresent = "nvidia.com/gpu.present";
inline constexpr std::string_view kDriverUpgradeState = "nvidia.com/gpu-driver-upgrade-state";
}  // namespace labels

// Reads the node part from a node's labels. Prefers current label names and
// falls back to the deprecated ones. A missing or malformed label is an
// InvalidArgument naming the label (never guessed). The "-SHARED" suffix
// GFD adds under time-slicing is dropped: sharing does not change kernels.
StatusOr<NodeFacts> NodeFactsFromLabels(const std::map<std::string, std::string>& labels);

// GFD's spelling of a product name as NVML reports it: spaces become
// dashes; a MIG profile ("1g.5gb") is appended as "-MIG-1g.5gb".
std::string GfdProductName(std::string_view nvml_name, std::string_view mig_profile = {});

// The labels (key and value, as found on this node) that NodeFactsFromLabels
// read, "-SHARED" suffix kept. A warmup Job's node affinity requires all of
// them, so the scheduler places it on any node of this fingerprint.
std::map<std::string, std::string> FingerprintLabels(
    const std::map<std::string, std::string>& labels);

// {"node":{...},"runtime":{...},"schema":1}, keys sorted, no whitespace.
// An input added after the first release is written only when it differs
// from its default (PutUnlessDefault, core/canonical_json.h), so existing
// ids never move (fingerprint_compat_test.cc pins them).
std::string CanonicalJson(const NodeFacts& node, const RuntimeFacts& runtime);

Fingerprint ComputeFingerprint(const NodeFacts& node, const RuntimeFacts& runtime);

// True when `id` looks like a fingerprint id (16 lower-case hex digits).
bool IsFingerprintId(std::string_view id);

}  // namespace kc::core
