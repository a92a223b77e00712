#include "initwarm/cache/staged_check.h"

#include <map>

namespace kc::initwarm {
namespace {

Status Differs(const std::string& path, const std::string& why) {
  return DataLossError("staging changed after its files were verified: " + path + " " + why +
                       "; nothing was published (someone else writes the volume's staging "
                       "directory)");
}

}  // namespace

Status CheckStagedAsExpected(const ExpectedTree& want, const WalkResult& walk,
                             const std::vector<std::string>& sums) {
  if (sums.size() != walk.files.size()) {
    return InternalError("seal: " + std::to_string(sums.size()) + " sums for " +
                         std::to_string(walk.files.size()) + " files");
  }
  std::map<std::string, const core::ManifestFile*> files;
  for (const auto& f : want.files) files.emplace(f.path, &f);
  for (std::size_t i = 0; i < walk.files.size(); ++i) {
    const auto& got = walk.files[i];
    auto it = files.find(got.path);
    if (it == files.end()) return Differs(got.path, "is there and was not verified");
    if (got.size != it->second->size || sums[i] != it->second->sha256) {
      return Differs(got.path, "has other bytes than were verified");
    }
    files.erase(it);
  }
  if (!files.empty()) return Differs(files.begin()->first, "was verified and is gone");
  std::map<std::string, std::string> links;
  for (const auto& l : want.links) links.emplace(l.path, l.target);
  for (const auto& got : walk.links) {
    auto it = links.find(got.path);
    if (it == links.end()) return Differs(got.path, "is a link that was not verified");
    if (it->second != got.target) return Differs(got.path, "links elsewhere than was verified");
    links.erase(it);
  }
  if (!links.empty()) return Differs(links.begin()->first, "was a verified link and is gone");
  return OkStatus();
}

}  // namespace kc::initwarm
