// StagedCheck: what a seal must find in staging when its caller built
// staging from bytes it had verified (a harvest: the published files checked
// against their manifest, the inbox files against their listed sha256).
//
// Staging is group-writable on a shared volume, so between the caller's
// check and the seal's own walk and hash anyone with the cache's uid or
// group may add, change or remove a file. Seal compares what it hashed with
// this list before it writes the manifest: the sealed manifest is then
// exactly the verified one, or nothing is published. Pure.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "core/manifest.h"
#include "initwarm/cache/walk.h"

namespace kc::initwarm {

struct ExpectedTree {
  std::vector<core::ManifestFile> files;
  std::vector<core::ManifestLink> links;
};

// DataLoss naming the first path that differs: a file or link in staging
// that is not expected, one expected that is missing, a file of another
// size or sha256, a link to another target. `sums[i]` is the sha256 of
// `walk.files[i]`.
Status CheckStagedAsExpected(const ExpectedTree& want, const WalkResult& walk,
                             const std::vector<std::string>& sums);

}  // namespace kc::initwarm
