// `initwarm verify`: the validation ladder on one cache directory.
#include <iostream>
#include <memory>

#include "core/exit_codes.h"
#include "core/layout.h"
#include "initwarm/cache/quarantine_rule.h"
#include "initwarm/cache/verify.h"
#include "initwarm/cli/cmd_common.h"
#include "initwarm/cli/commands.h"
#include "initwarm/fs/fsutil.h"
#include "initwarm/gpu/cuda_module_loader.h"

namespace kc::initwarm {

namespace {

// LoadTest's rungs: the cubin loader (noted and skipped without a driver)
// and the AOTInductor rung (initwarm/aoti/aoti_rung.h: every listed *.pt2
// must load and run; skipped, noted, without the kc-aoti-check helper). The
// gate runs the same ladder. The loader returned must outlive `o`'s use.
std::unique_ptr<ModuleLoader> AddLoadTest(VerifyOptions* o) {
  if (o->level != core::Level::kLoadTest) return nullptr;
  o->check_packages = AotiPackageCheck();
  auto l = NewCudaModuleLoader();
  if (!l.ok()) {
    std::cerr << "initwarm verify: LoadTest unavailable: " << l.status().message() << "\n";
    return nullptr;
  }
  std::unique_ptr<ModuleLoader> loader = std::move(*l);
  ModuleLoader* raw = loader.get();
  o->load_cubin = [raw](std::string_view image, std::string_view name) {
    return raw->LoadCubin(image, name);
  };
  return loader;
}

void PrintReport(const VerifyReport& r, const std::filesystem::path& dir, bool json) {
  if (json) {
    std::cout << VerifyReportJson(r) << "\n";
    return;
  }
  for (const auto& n : r.notes) std::cout << "note: " << n << "\n";
  if (r.ok) {
    std::cout << "OK " << dir.string() << ": passed up to "
              << core::LevelName(static_cast<core::Level>(r.passed)) << " ("
              << r.manifest.total_files << " files, " << r.manifest.total_bytes << " bytes, "
              << r.kernels << " Triton kernels, " << r.cubins_loaded << " cubins loaded)\n";
  } else {
    std::cout << "FAIL " << dir.string() << ": " << r.finding.ToString() << "\n";
  }
}

}  // namespace

int RunVerify(const std::vector<std::string>& args) {
  FlagSet f(CommandUsage("verify"),
            "Runs the validation ladder on v1/<fingerprint> level by level: 1 Manifest (READY, "
            "digest, schema), 2 Fingerprint, 3 Checksums (sizes, sha256, no leftovers, Triton "
            "__grp__ children), 4 TargetArch (Triton target.arch vs the node), 5 LoadTest (every "
            "cubin through cuModuleLoadData; skipped without a GPU). On failure the directory is "
            "moved to v1/.quarantine/<fingerprint>-<time>/ with a REASON file.\n\n"
            "exit codes: 0 valid; 9 invalid (the output names the first bad file and why); 2 bad "
            "flags; 1 other error.");
  VerifyOptions o;  // its threads are the flag's default
  std::string root;
  std::string fp;
  std::string dir;
  std::string level_name = "LoadTest";
  std::string node_facts;
  std::string view = std::string(core::kDefaultView);
  bool no_quarantine = false;
  bool json = false;
  AddRootFlag(&f, &root);
  f.String("fingerprint", &fp, "fingerprint id of the cache (and the one it must carry)")
      .Env("KC_FINGERPRINT");
  f.String("dir", &dir, "verify this directory instead of v1/<fingerprint> (never quarantined)");
  f.String("level", &level_name,
           "highest level: Manifest|Fingerprint|Checksums|TargetArch|LoadTest");
  f.String("node-facts", &node_facts, "this node's facts (inline JSON or file) for levels 2 and 4")
      .Env("KC_NODE_FACTS");
  f.String("compute-capability", &o.compute_capability,
           "this node's compute capability (e.g. 9.0) for level 4");
  f.String("view", &view, "the fixed cache view path Triton group files point under");
  f.Bool("no-quarantine", &no_quarantine, "report only; leave a bad cache where it is");
  f.Bool("json", &json, "print the report as one JSON object");
  f.Int("threads", &o.threads, 0, 1024, "hashing threads (0: twice the cores)");
  if (int rc = ParseOrExit("verify", &f, args); rc >= 0) return rc;

  auto level = core::ParseLevel(level_name);
  if (!level.ok()) {
    PrintError("verify", level.status().WithContext("--level"));
    return core::kExitUsage;
  }
  auto node = NodeFactsArg(node_facts);
  if (!node.ok()) {
    PrintError("verify", node.status());
    return core::kExitUsage;
  }
  core::Layout layout(root);
  if (!dir.empty()) {
    o.dir = dir;
  } else if (core::IsFingerprintId(fp)) {
    o.dir = layout.Published(fp);
    o.anchor = layout.root();  // v1/<fp> is opened beneath it, no symlink followed
  } else {
    PrintError("verify", InvalidArgumentError("--fingerprint \"" + fp +
                                              "\" is not a fingerprint id; or pass --dir"));
    return core::kExitUsage;
  }
  o.level = *level;
  o.expected_fingerprint = fp;
  o.node = *node;
  o.view_prefix = view;
  std::unique_ptr<ModuleLoader> loader = AddLoadTest(&o);
  VerifyReport r = VerifyCache(o);
  std::string quarantined;
  const QuarantineFacts facts{
      .published_dir = dir.empty(),
      .asked = !no_quarantine,
      .ready_absent = r.finding.file == core::kReadyFileName && !Exists(o.dir / "READY"),
      .version_dir_real = IsRealDirectory(layout.VersionDir())};
  if (!r.ok && DecideQuarantine(facts) == QuarantineDecision::kQuarantine) {
    auto q = Quarantine(layout, fp, o.dir, r.finding);
    if (q.ok()) {
      quarantined = q->string();
    } else {
      std::cerr << "initwarm verify: could not quarantine " << o.dir << ": " << q.status() << "\n";
    }
  }
  PrintReport(r, o.dir, json);
  if (!quarantined.empty()) std::cerr << "initwarm verify: quarantined to " << quarantined << "\n";
  return r.ok ? core::kExitOk : core::kExitInvalid;
}

}  // namespace kc::initwarm
