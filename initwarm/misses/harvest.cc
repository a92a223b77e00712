#include "initwarm/misses/harvest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>

#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/manifest.h"
#include "core/security_context.h"
#include "core/validate.h"
#include "initwarm/cache/copy_cache.h"
#include "initwarm/cache/lock.h"
#include "initwarm/cache/seal.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/fs/hasher.h"
#include "initwarm/fs/safe_file.h"
#include "initwarm/gpu/cubin_elf.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMaxReadyBytes = 4096;

// The published generation: its manifest, checked against READY.
struct Base {
  core::Manifest manifest;
  std::string digest;
};

StatusOr<Base> ReadBase(const SafeDir& published, const std::string& fp,
                        const std::string& want_digest) {
  auto ready = published.ReadFile(core::kReadyFileName, kMaxReadyBytes, true);
  if (!ready.ok()) {
    return FailedPreconditionError("fingerprint " + fp + " has no READY cache to merge into (" +
                                   ready.status().message() + ")");
  }
  std::string digest = *ready;
  while (!digest.empty() && std::isspace(static_cast<unsigned char>(digest.back()))) {
    digest.pop_back();
  }
  KC_ASSIGN_OR_RETURN(std::string text,
                      published.ReadFile(core::kManifestFileName, core::kMaxManifestBytes, true));
  if (core::Sha256Hex(text) != digest) {
    return FailedPreconditionError("fingerprint " + fp +
                                   ": READY does not hold the sha256 of manifest.json; not "
                                   "merging into a cache that does not verify");
  }
  if (!want_digest.empty() && digest != want_digest) {
    return FailedPreconditionError("fingerprint " + fp +
                                   " changed since this harvest was planned: "
                                   "READY holds " +
                                   digest.substr(0, 12) + ", the operator expected " +
                                   want_digest.substr(0, 12) + "; the next harvest merges into it");
  }
  auto m = core::ParseManifest(text);
  if (!m.ok()) return m.status().WithContext("manifest.json of fingerprint " + fp);
  return Base{std::move(*m), std::move(digest)};
}

// A pod's list, read from its inbox and checked against the accept list.
StatusOr<std::vector<core::HarvestFile>> ReadList(const SafeDir& dir, const core::HarvestPod& pod) {
  KC_ASSIGN_OR_RETURN(std::string text,
                      dir.ReadFile(core::kHarvestListFile, core::kMaxHarvestListBytes, true));
  if (core::Sha256Hex(text) != pod.list.sha256) {
    return InvalidArgumentError("its list is not the one the pod reported (sha256 " +
                                core::Sha256Hex(text).substr(0, 12) + ", reported " +
                                pod.list.sha256.substr(0, 12) + ")");
  }
  return core::ParseHarvestList(text);
}

// Step 2: each file the accepted pods listed, as found in the inbox.
std::vector<core::InboxFile> ReadInbox(const core::Layout& layout, const HarvestOptions& o,
                                       const std::optional<int>& arch,
                                       const std::set<std::string, std::less<>>& base) {
  std::vector<core::InboxFile> out;
  for (const core::HarvestPod& pod : o.accept) {
    auto dir = SafeDir::OpenUnder(o.root, layout.InboxOf(o.fingerprint, pod.uid));
    auto list =
        dir.ok() ? ReadList(*dir, pod) : StatusOr<std::vector<core::HarvestFile>>(dir.status());
    if (!list.ok()) {
      // Nothing of this pod is read: one reason, on a path of its own.
      out.push_back({pod.uid,
                     {"(list)/" + std::string(core::kHarvestListFile), 0, std::string(64, '0')},
                     "the pod's inbox list cannot be used: " + list.status().message()});
      continue;
    }
    // Everything this pod offers, with the base: a Triton group must name
    // only files the merged generation will hold.
    std::set<std::string, std::less<>> offered = base;
    for (const auto& f : *list) offered.insert(f.path);
    std::int64_t files = 0;
    std::int64_t bytes = 0;
    for (const core::HarvestFile& f : *list) {
      core::InboxFile in{pod.uid, f, ""};
      files += 1;
      bytes += static_cast<std::int64_t>(f.size);
      if (files > o.caps.max_files_per_pod || bytes > o.caps.max_bytes_per_pod) {
        in.problem = "past the pod's harvest caps (spec.harvest.maxFilesPerPod / maxBytesPerPod)";
      } else {
        HashOptions ho;
        ho.dir = &*dir;
        ho.threads = 1;
        auto sums = HashFiles({{f.path, f.size}}, ho);
        if (!sums.ok()) {
          in.problem = sums.status().message();
        } else if ((*sums)[0] != f.sha256) {
          in.problem = "its sha256 is not the one the pod listed";
        } else if (core::IsTritonMetadataFile(f.path) || core::IsTritonGroupFile(f.path) ||
                   f.path.ends_with(".cubin")) {
          auto text = dir->ReadFile(f.path, f.size, true);
          if (!text.ok()) {
            in.problem = text.status().message();
          } else if (f.path.ends_with(".cubin")) {
            if (Status s = CheckCudaElfImage(*text); !s.ok()) in.problem = s.message();
          } else if (core::IsTritonGroupFile(f.path)) {
            if (auto bad = core::CheckTritonGroup(f.path, *text, core::kDefaultView, offered)) {
              in.problem = bad->reason;
            }
          } else if (arch) {
            if (auto bad = core::CheckTritonTargetArch(f.path, *text, *arch)) {
              in.problem = bad->reason;
            }
          }
        }
      }
      out.push_back(std::move(in));
    }
  }
  return out;
}

// Step 4: the next generation in `staging`.
Status BuildGeneration(const SafeDir& published, const Base& base, const core::Layout& layout,
                       const HarvestOptions& o, const core::MergePlan& plan,
                       const fs::path& staging) {
  KC_RETURN_IF_ERROR(CopyCache(published, staging, base.manifest, o.threads));
  for (auto name : {core::kManifestFileName, core::kReadyFileName}) {
    if (::unlink((staging / name).c_str()) != 0 && errno != ENOENT) {
      return ErrnoStatus(errno, "unlink " + (staging / name).string());
    }
  }
  // The copy is checked against the manifest: a published file changed on
  // the volume is not carried into the next generation.
  KC_ASSIGN_OR_RETURN(SafeDir staged, SafeDir::OpenUnder(o.root, staging));
  std::vector<HashJob> jobs;
  for (const auto& f : base.manifest.files) jobs.push_back({f.path, f.size});
  HashOptions ho;
  ho.dir = &staged;
  ho.threads = o.threads;
  KC_ASSIGN_OR_RETURN(std::vector<std::string> sums, HashFiles(jobs, ho));
  for (std::size_t i = 0; i < sums.size(); ++i) {
    if (sums[i] != base.manifest.files[i].sha256) {
      return DataLossError("published file " + base.manifest.files[i].path + " of fingerprint " +
                           o.fingerprint +
                           " does not match its manifest; verify the cache (initwarm verify) "
                           "before merging into it");
    }
  }
  for (const core::InboxFile& add : plan.add) {
    KC_ASSIGN_OR_RETURN(SafeDir dir,
                        SafeDir::OpenUnder(o.root, layout.InboxOf(o.fingerprint, add.pod_uid)));
    KC_ASSIGN_OR_RETURN(UniqueFd in, dir.OpenFile(add.file.path, true));
    const std::string what = "inbox file " + add.file.path + " of pod " + add.pod_uid;
    KC_ASSIGN_OR_RETURN(
        std::string sum,
        CopyHashed(in.get(), add.file.size, what, staging / add.file.path, core::kSealedFileMode));
    if (sum != add.file.sha256) return DataLossError(what + " changed while it was merged");
  }
  return OkStatus();
}

}  // namespace

StatusOr<core::HarvestReport> Harvest(const HarvestOptions& o) {
  if (!core::IsFingerprintId(o.fingerprint)) {
    return InvalidArgumentError("--fingerprint: \"" + o.fingerprint +
                                "\" is not a fingerprint id (16 lower-case hex digits)");
  }
  if (!core::IsSafeUid(o.owner)) {
    return InvalidArgumentError("--job-uid: \"" + o.owner + "\" is not a usable uid");
  }
  const core::Layout layout(o.root);
  const fs::path lock = layout.Lock(o.fingerprint);
  const fs::path staging = layout.Staging(o.fingerprint, o.owner);
  LockOptions lo;
  lo.stale_after_s = o.lock_stale_after_s;
  KC_RETURN_IF_ERROR(AcquireLock(lock, SelfLockRecord(o.owner, staging.string()), lo));
  HeldLock held(lock, o.owner);  // released on every return but the seal's

  auto published = SafeDir::OpenUnder(o.root, layout.Published(o.fingerprint));
  if (!published.ok()) {
    return FailedPreconditionError("fingerprint " + o.fingerprint + " has no published cache (" +
                                   published.status().message() + ")");
  }
  auto base = ReadBase(*published, o.fingerprint, o.base_digest);
  if (!base.ok()) return base.status();
  std::optional<int> arch;
  if (base->manifest.node) {
    if (auto a = core::ArchFromComputeCapability(base->manifest.node->compute_capability); a.ok()) {
      arch = *a;
    }
  }
  std::map<std::string, std::string> base_files;
  std::set<std::string, std::less<>> base_paths;
  for (const auto& f : base->manifest.files) {
    base_files[f.path] = f.sha256;
    base_paths.insert(f.path);
  }
  const std::vector<core::InboxFile> inbox = ReadInbox(layout, o, arch, base_paths);
  const core::MergePlan plan = core::PlanMerge(base_files, inbox, o.caps);

  core::HarvestReport r;
  r.fingerprint = o.fingerprint;
  r.base_digest = base->digest;
  r.conflict_count = static_cast<std::int64_t>(plan.conflicts.size());
  r.conflicts = plan.conflicts;
  r.rejected_count = static_cast<std::int64_t>(plan.rejected.size());
  r.rejected = plan.rejected;
  r.duplicate_count = static_cast<std::int64_t>(plan.duplicates.size());
  r.pods = static_cast<std::int64_t>(o.accept.size());
  std::set<std::string> entries;
  for (const auto& a : plan.add) {
    r.added_files += 1;
    r.added_bytes += static_cast<std::int64_t>(a.file.size);
    entries.insert(core::HarvestEntryOf(a.file.path));
  }
  r.added_entries.assign(entries.begin(), entries.end());

  auto forget_inbox = [&] {
    for (const auto& pod : o.accept) (void)RemoveTree(layout.InboxOf(o.fingerprint, pod.uid));
  };
  if (plan.add.empty()) {
    r.outcome = core::HarvestOutcome::kUnchanged;
    forget_inbox();
    return r;
  }
  if (Exists(staging)) {
    KC_RETURN_IF_ERROR(RemoveTree(staging));
  }
  if (Status s = BuildGeneration(*published, *base, layout, o, plan, staging); !s.ok()) {
    (void)RemoveTree(staging);
    return s;
  }
  SealOptions so;
  so.root = o.root;
  so.fingerprint = o.fingerprint;
  so.owner = o.owner;
  so.staging = staging;
  if (base->manifest.node && base->manifest.runtime) {  // seal wants both or neither
    so.node = base->manifest.node;
    so.runtime = base->manifest.runtime;
  }
  so.replace = true;
  // Seal what was verified, nothing else: the base manifest's files and
  // links and the plan's additions, each with its checked sha256.
  so.expected = ExpectedTree{base->manifest.files, base->manifest.links};
  for (const core::InboxFile& add : plan.add) {
    so.expected->files.push_back({add.file.path, add.file.size, add.file.sha256});
  }
  so.threads = o.threads;
  so.lock_stale_after_s = o.lock_stale_after_s;
  held.HandOn();
  auto sealed = Seal(so);  // adopts the lock (same owner) and releases it
  if (!sealed.ok()) return sealed.status();
  r.outcome = core::HarvestOutcome::kMerged;
  r.manifest_digest = sealed->manifest_digest;
  r.bytes = static_cast<std::int64_t>(sealed->bytes);
  r.files = static_cast<std::int64_t>(sealed->files);
  forget_inbox();
  return r;
}

}  // namespace kc::initwarm
