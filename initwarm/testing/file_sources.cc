#include "initwarm/testing/file_sources.h"

#include <fstream>
#include <sstream>
#include <utility>

namespace kc::initwarm::testing {
namespace {

StatusOr<std::string> ReadAll(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) return NotFoundError(what + " " + path + " cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class FileProber : public Prober {
 public:
  explicit FileProber(std::string path) : path_(std::move(path)) {}
  StatusOr<ProbeResult> Probe() override {
    KC_ASSIGN_OR_RETURN(std::string text, ReadAll(path_, "probe facts file"));
    auto facts = NodeFactsFromJson(text);
    if (!facts.ok()) return facts.status().WithContext("probe facts file " + path_);
    return ProbeResult{*facts, "file:" + path_};
  }

 private:
  std::string path_;
};

class FileResolver : public Resolver {
 public:
  explicit FileResolver(std::string path) : path_(std::move(path)) {}
  StatusOr<ResolveAnswer> Resolve(const std::string&, const std::string&,
                                  const std::string&) override {
    KC_ASSIGN_OR_RETURN(std::string text, ReadAll(path_, "resolve answer file"));
    auto a = ParseResolveAnswer(text);
    if (!a.ok()) return a.status().WithContext("resolve answer file " + path_);
    return a;
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<Prober> NewFileProber(std::string path) {
  return std::make_unique<FileProber>(std::move(path));
}
std::unique_ptr<Resolver> NewFileResolver(std::string path) {
  return std::make_unique<FileResolver>(std::move(path));
}
Seams FileSeams() {
  Seams s;
  s.file_prober = [](const std::string& p) { return NewFileProber(p); };
  s.file_resolver = [](const std::string& p) { return NewFileResolver(p); };
  return s;
}

}  // namespace kc::initwarm::testing
