// Random hostile trees against the real `initwarm` binary.
//
// Someone with write access to the cache volume rewrites a sealed cache
// (and a warmup's staging tree) the ways an attacker would: links to
// absolute and relative targets outside the cache, a link in an
// intermediate directory, FIFOs, sockets, hard links to files outside,
// sizes of 10^18 and 0, deep and long paths, names that are not UTF-8,
// READY and manifest.json replaced by garbage, a FIFO or a link, v1/<fp> and
// v1/.staging replaced by links. Often the manifest and READY are then
// rewritten consistently to list what is on disk. A fixed seed and a
// bounded count make the trees the same on every run, and every kind of
// edit is made in turn (tree t: content edit t % 12, layout edit t % 8, gc
// edit t % 3), not left to the draw; the last tree is left clean.
//
// Every command (wait in Shared and Copy at every verify level, verify,
// seal, gc) must either refuse with a named reason (its documented exit
// code and a message naming the finding) or succeed without reading
// outside the cache: an independent check (lstat only) then finds every
// listed file a regular file with one name reached through real
// directories, a Copy view holds none of the bytes placed outside, and gc
// left everything outside as it was. Each command runs in a child under a
// generous watchdog (timeout -s KILL) that catches only hangs: blocking is
// impossible by construction (nothing but regular files and directories is
// ever opened), so a refusal comes at once, without a wall-clock bound here.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/manifest.h"
#include "initwarm/cache/prepare.h"
#include "initwarm/cache/seal.h"
#include "initwarm/testing/test_util.h"

#ifndef KC_INITWARM_BIN
#define KC_INITWARM_BIN "initwarm"
#endif

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::WriteFile;

constexpr std::uint32_t kSeed = 20261204;
constexpr int kTrees = 24;
// Catches hangs only: far above what any command here takes, even loaded.
constexpr const char* kWatchdogSeconds = "300";
constexpr const char* kSecret = "SECRET-BYTES-OUTSIDE-THE-CACHE";

const char* const kLevels[] = {"Manifest", "Fingerprint", "Checksums", "TargetArch", "LoadTest"};

struct Outcome {
  int rc = -1;
  std::string out;
};

Outcome Initwarm(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", kWatchdogSeconds,
                                   KC_INITWARM_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  Outcome r;
  r.rc = testing::RunProcess(argv, {"KC_TERMINATION_LOG="}, &r.out);
  return r;
}

// lstat-only view of the disk, independent of the code under test.
bool IsRegularSingle(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
}
bool IsRealDir(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Every file `m` lists under `dir` is a regular file with one name, reached
// through real directories only (nothing followed out of the cache).
// Whether each file `m` lists is a regular file with one name under `dir`,
// reached through real directories only.
std::string ListedStayInside(const fs::path& dir, const core::Manifest& m) {
  for (const auto& f : m.files) {
    fs::path p = dir;
    const fs::path rel(f.path);
    for (auto it = rel.begin(); it != rel.end(); ++it) {
      if (std::next(it) == rel.end()) break;
      p /= *it;
      if (!IsRealDir(p)) return p.string() + " is not a real directory";
    }
    if (!IsRegularSingle(dir / f.path)) return f.path + " is not a regular file with one name";
  }
  return "";
}

// The same for a layered view `view` over the published directory `pub`:
// each listed file is either a regular file of the view (a copied entry) or
// a symlink to exactly the same path under `pub`, which itself passes
// ListedStayInside.
std::string LayeredStaysInside(const fs::path& view, const fs::path& pub, const core::Manifest& m) {
  core::Manifest linked;
  for (const auto& f : m.files) {
    const fs::path p = view / f.path;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(p, ec))) {
      const fs::path to = fs::read_symlink(p, ec);
      if (ec || to != pub / f.path) {
        return f.path + " links to " + to.string() + ", not to its published file";
      }
      linked.files.push_back(f);
    } else if (!IsRegularSingle(p)) {
      return f.path + " is neither a link into the cache nor a regular file with one name";
    }
  }
  return ListedStayInside(pub, linked);
}

// Whether any regular file under `dir` (links not followed) holds kSecret.
bool HoldsSecret(const fs::path& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!fs::is_regular_file(it->symlink_status())) continue;  // never open a FIFO
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(kSecret) != std::string::npos) return true;
  }
  return false;
}

// What lies outside the cache, to prove it untouched: path -> content.
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!fs::is_regular_file(it->symlink_status())) {
      out[it->path().string()] = "(not a file)";
      continue;
    }
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out[it->path().string()] = ss.str();
  }
  return out;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class HostileVolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
    outside_ = scratch_.path() / "outside";
    WriteFile(outside_ / "secret", kSecret);
    WriteFile(outside_ / "keep/victim", kSecret);
  }

  // A sealed cache of `kernels` Triton kernels under `root`.
  void Publish(const fs::path& root, int kernels) {
    auto r = testing::SealTestCache(root, fp_, "job-1", [kernels](const fs::path& staging) {
      testing::WriteTritonCache(staging, kernels);
    });
    ASSERT_TRUE(r.ok()) << r.status();
  }

  // A relative symlink target from `rel` (inside the cache at `cache`)
  // to `to` (anywhere).
  static std::string RelativeTarget(const fs::path& cache, const std::string& rel,
                                    const fs::path& to) {
    return fs::path(to).lexically_relative((cache / rel).parent_path()).string();
  }

  // Hostile edits of a cache's content (published or staging) at `dir`;
  // `m` (when not null) is the manifest an attacker then rewrites to list
  // what is on disk. Returns the names of the edits made.
  std::vector<std::string> MutateContent(const fs::path& dir, core::Manifest* m, std::mt19937* rng,
                                         int tree) {
    // The last tree keeps its content: with the layout and gc edits its
    // index leaves out (none), every command must accept it.
    if (tree == kTrees - 1) return {};
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::end(it); ++it) {
      if (it->is_regular_file() && !IsReservedName(it->path().filename().string())) {
        files.push_back(it->path().lexically_relative(dir).string());
      }
    }
    std::sort(files.begin(), files.end());
    auto pick = [&] { return files[(*rng)() % files.size()]; };
    auto listed = [&](const std::string& rel) -> core::ManifestFile* {
      if (m == nullptr) return nullptr;
      for (auto& f : m->files) {
        if (f.path == rel) return &f;
      }
      return nullptr;
    };
    auto set_listed = [&](const std::string& rel, const std::string& bytes) {
      if (auto* f = listed(rel)) {
        f->size = bytes.size();
        f->sha256 = core::Sha256Hex(bytes);
      }
    };
    std::vector<std::string> done;
    const int edits = 1 + static_cast<int>((*rng)() % 2);
    for (int e = 0; e < edits; ++e) {
      const std::string f = pick();
      const fs::path p = dir / f;
      if (!IsRegularSingle(p)) continue;  // already edited
      // The first edit of tree t is kind t % 12, so every kind is made
      // (twice over 24 trees); a second one is drawn.
      const int kind = e == 0 ? tree % 12 : static_cast<int>((*rng)() % 12);
      content_kinds_.insert(kind);
      switch (kind) {
        case 0:
          fs::remove(p);
          fs::create_symlink(outside_ / "secret", p);
          set_listed(f, kSecret);
          done.push_back("absolute link " + f);
          break;
        case 1:
          fs::remove(p);
          fs::create_symlink(RelativeTarget(dir, f, outside_ / "secret"), p);
          set_listed(f, kSecret);
          done.push_back("relative link " + f);
          break;
        case 2: {  // the directory holding f, moved outside and linked back
          const fs::path parent = p.parent_path();
          const fs::path away =
              outside_ / ("dir-" + std::to_string(tree) + "-" + std::to_string(uniq_++));
          fs::create_directories(away.parent_path());
          fs::copy(parent, away, fs::copy_options::recursive);
          WriteFile(away / "planted", kSecret);
          fs::remove_all(parent);
          if ((*rng)() % 2 == 0) {
            fs::create_symlink(away, parent);
          } else {
            fs::create_symlink(RelativeTarget(dir, parent.lexically_relative(dir).string(), away),
                               parent);
          }
          done.push_back("intermediate directory link " + parent.lexically_relative(dir).string());
          return done;  // other picks may lie under it
        }
        case 3:
          fs::remove(p);
          EXPECT_EQ(::mkfifo(p.c_str(), 0644), 0) << std::strerror(errno);
          set_listed(f, "");
          done.push_back("FIFO for " + f);
          break;
        case 4:
          EXPECT_EQ(::mkfifo((p.parent_path() / "unlisted.fifo").c_str(), 0644), 0);
          done.push_back("unlisted FIFO beside " + f);
          break;
        case 5: {
          const fs::path sock = p.parent_path() / "s";
          int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
          sockaddr_un addr{};
          addr.sun_family = AF_UNIX;
          if (fd >= 0 && sock.string().size() < sizeof(addr.sun_path)) {
            std::strncpy(addr.sun_path, sock.c_str(), sizeof(addr.sun_path) - 1);
            EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
            done.push_back("socket beside " + f);
          }
          if (fd >= 0) ::close(fd);
          break;
        }
        case 6:
          fs::remove(p);
          fs::create_hard_link(outside_ / "secret", p);
          set_listed(f, kSecret);
          done.push_back("hard link to outside as " + f);
          break;
        case 7:
          if (auto* lf = listed(f)) {
            lf->size = 1000000000000000000ull;
            done.push_back("size 10^18 listed for " + f);
          } else {
            fs::resize_file(p, 0);
            done.push_back("zero size " + f);
          }
          break;
        case 8:
          fs::resize_file(p, 0);
          if ((*rng)() % 2 == 0) set_listed(f, "");
          done.push_back("zero size " + f);
          break;
        case 9: {  // deep: 60-180 levels, under PATH_MAX
          std::string rel = "inductor";
          const int depth = 60 + static_cast<int>((*rng)() % 120);
          for (int d = 0; d < depth; ++d) rel += "/d" + std::to_string(d % 10);
          rel += "/deep.bin";
          WriteFile(dir / rel, "deep");
          if (m != nullptr && (*rng)() % 2 == 0) {
            m->files.push_back({rel, 4, core::Sha256Hex("deep")});
          }
          done.push_back("deep path (" + std::to_string(depth) + " levels)");
          break;
        }
        case 10: {  // a 255-byte name
          const std::string rel = "inductor/" + std::string(255, 'n');
          WriteFile(dir / rel, "long");
          if (m != nullptr && (*rng)() % 2 == 0) {
            m->files.push_back({rel, 4, core::Sha256Hex("long")});
          }
          done.push_back("255-byte name");
          break;
        }
        default: {  // not UTF-8: no manifest can list it
          WriteFile(p.parent_path() / "\xFF\xFE-not-utf8.bin", "x");
          done.push_back("name that is not UTF-8 beside " + f);
          break;
        }
      }
    }
    return done;
  }

  static bool IsReservedName(const std::string& name) {
    return name == core::kManifestFileName || name == core::kReadyFileName;
  }

  // Edits of READY, manifest.json and the layout itself, after any rewrite.
  std::vector<std::string> MutateMeta(const fs::path& root, std::mt19937* rng, int tree) {
    const fs::path pub = core::Layout(root).Published(fp_);
    const fs::path ready = pub / core::kReadyFileName;
    const int kind = tree % 8;  // every kind in turn; 6 and 7: no edit
    meta_kinds_.insert(kind);
    switch (kind) {
      case 0:
        fs::remove(ready);
        WriteFile(ready, testing::Bytes(100000, static_cast<std::uint32_t>(tree)));
        return {"READY of 100 kB random bytes"};
      case 1:
        fs::remove(ready);
        WriteFile(ready, "not-a-digest\n");
        return {"READY of a short garbage line"};
      case 2:
        fs::remove(ready);
        EXPECT_EQ(::mkfifo(ready.c_str(), 0644), 0);
        return {"READY is a FIFO"};
      case 3: {
        const fs::path copy = outside_ / ("manifest-" + std::to_string(tree) + ".json");
        fs::copy_file(pub / core::kManifestFileName, copy);
        fs::remove(pub / core::kManifestFileName);
        fs::create_symlink(copy, pub / core::kManifestFileName);
        return {"manifest.json is a link to a copy outside"};
      }
      case 4: {
        const std::string junk = "this is not JSON";
        WriteFile(pub / core::kManifestFileName, junk);
        WriteFile(ready, core::Sha256Hex(junk) + "\n");
        return {"READY names a manifest that does not parse"};
      }
      case 5: {
        const fs::path away = outside_ / ("published-" + std::to_string(tree));
        fs::rename(pub, away);
        fs::create_symlink(away, pub);
        return {"v1/<fp> is a link to a cache outside"};
      }
      default:
        return {};
    }
  }

  // Staging leftovers for gc: a v1/.staging that is a link outside, or an
  // old staging directory holding links outside.
  std::vector<std::string> MutateForGc(const fs::path& root, std::mt19937* rng, int tree) {
    core::Layout l(root);
    const int kind = tree % 3;  // every kind in turn; 2: no edit
    gc_kinds_.insert(kind);
    switch (kind) {
      case 0: {
        const fs::path away = outside_ / ("staging-" + std::to_string(tree));
        WriteFile(away / (fp_ + "-old/victim"), kSecret);
        fs::remove_all(l.StagingRoot());
        fs::create_symlink(away, l.StagingRoot());
        return {"v1/.staging is a link outside"};
      }
      case 1: {
        const fs::path old = l.StagingRoot() / (fp_ + "-old");
        fs::create_directories(old / "triton");
        fs::create_symlink(outside_ / "keep", old / "triton/out");
        fs::create_symlink(outside_ / "keep/victim", old / "victim");
        fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(72));
        return {"old staging holding links outside"};
      }
      default:
        return {};
    }
  }

  testing::ScratchDir scratch_;
  std::string fp_;
  fs::path outside_;
  int uniq_ = 0;                                         // names of what is moved outside
  std::set<int> content_kinds_, meta_kinds_, gc_kinds_;  // the kinds of edit made
};

// A refusal names its reason: one of the findings the readers give.
bool NamesAReason(const std::string& out) {
  for (const char* phrase :
       {"is a symlink", "is a FIFO", "is a socket", "special file", "hard link", "manifest says",
        "truncated", "sha256", "not in the manifest", "missing", "not UTF-8", "is refused",
        "larger than", "not a directory", "manifest.json", "was replaced", "changed while",
        "outside the cache view"}) {
    if (out.find(phrase) != std::string::npos) return true;
  }
  return false;
}

std::string Describe(const std::vector<std::string>& edits) {
  std::string s;
  for (const auto& e : edits) s += (s.empty() ? "" : "; ") + e;
  return s.empty() ? "(no edit)" : s;
}

TEST_F(HostileVolumeTest, EveryCommandRefusesWithAReasonOrStaysInside) {
  std::mt19937 rng(kSeed);
  int refused = 0;
  int succeeded = 0;
  for (int t = 0; t < kTrees; ++t) {
    const fs::path root = scratch_.path() / ("vol-" + std::to_string(t));
    Publish(root, 1 + static_cast<int>(rng() % 3));
    const fs::path pub = core::Layout(root).Published(fp_);
    const std::string sealed_ready = ReadAll(pub / core::kReadyFileName).substr(0, 64);
    auto m = core::ParseManifest(ReadAll(pub / core::kManifestFileName));
    ASSERT_TRUE(m.ok()) << m.status();
    std::vector<std::string> edits = MutateContent(pub, &*m, &rng, t);
    if (rng() % 4 != 0) {  // the attacker rewrites manifest and READY to match
      std::sort(m->files.begin(), m->files.end(),
                [](const auto& a, const auto& b) { return a.path < b.path; });
      core::FinalizeManifest(&*m);
      const std::string text = core::ManifestToJson(*m);
      WriteFile(pub / core::kManifestFileName, text);
      WriteFile(pub / core::kReadyFileName, core::Sha256Hex(text) + "\n");
      edits.emplace_back("manifest and READY rewritten to match");
    }
    for (auto& e : MutateMeta(root, &rng, t)) edits.push_back(e);
    for (auto& e : MutateForGc(root, &rng, t)) edits.push_back(e);
    const std::string what = "tree " + std::to_string(t) + ": " + Describe(edits);
    const auto outside_before = Snapshot(outside_);

    // wait, Shared and Copy, every level.
    for (const char* mode : {"Shared", "Copy"}) {
      for (const char* level : kLevels) {
        const fs::path run = scratch_.path() / ("run-" + std::to_string(t));
        Outcome r =
            Initwarm({"wait", "--root", root.string(), "--view", (run / "view").string(),
                      "--local-dir", (run / "local").string(), "--fingerprint", fp_, "--no-probe",
                      "--no-quarantine", "--mode", mode, "--verify", level, "--timeout", "10m",
                      "--view-prefix", std::string(core::kDefaultView)});
        const std::string cmd = std::string("wait --mode ") + mode + " --verify " + level;
        ASSERT_NE(r.rc, 137) << what << "\n" << cmd << " hung (killed by the watchdog)";
        if (r.rc == 0) {
          ++succeeded;
          const fs::path target = fs::read_symlink(run / "view");
          auto used = core::ParseManifest(ReadAll(target / core::kManifestFileName));
          ASSERT_TRUE(used.ok()) << what << "\n" << cmd << ": " << used.status();
          const std::string inside = std::string(mode) == "Copy"
                                         ? ListedStayInside(target, *used)
                                         : LayeredStaysInside(target, pub, *used);
          EXPECT_EQ(inside, "") << what << "\n" << cmd << "\n" << r.out;
          EXPECT_FALSE(HoldsSecret(target)) << what << "\n" << cmd << "\n" << r.out;
        } else {
          ++refused;
          EXPECT_EQ(r.rc, 9) << what << "\n" << cmd << "\n" << r.out;
          EXPECT_NE(r.out.find("failed validation: "), std::string::npos) << what << "\n"
                                                                          << cmd << "\n"
                                                                          << r.out;
          EXPECT_TRUE(NamesAReason(r.out)) << what << "\n" << cmd << "\n" << r.out;
        }
      }
    }

    // verify.
    Outcome v = Initwarm({"verify", "--root", root.string(), "--fingerprint", fp_, "--level",
                          "LoadTest", "--no-quarantine"});
    ASSERT_NE(v.rc, 137) << what << "\nverify hung";
    if (v.rc == 0) {
      auto used = core::ParseManifest(ReadAll(pub / core::kManifestFileName));
      ASSERT_TRUE(used.ok()) << what;
      EXPECT_EQ(ListedStayInside(pub, *used), "") << what << "\nverify\n" << v.out;
    } else {
      EXPECT_EQ(v.rc, 9) << what << "\nverify\n" << v.out;
      EXPECT_NE(v.out.find("FAIL "), std::string::npos) << what << "\nverify\n" << v.out;
      EXPECT_TRUE(NamesAReason(v.out)) << what << "\nverify\n" << v.out;
    }

    // gc: asked to remove this cache by the digest it was sealed with.
    Outcome g = Initwarm({"gc", "--root", root.string(), "--remove", fp_ + ":" + sealed_ready});
    ASSERT_NE(g.rc, 137) << what << "\ngc hung";
    EXPECT_TRUE(g.rc == 0 || (g.rc == 1 && g.out.find("initwarm gc: ") != std::string::npos))
        << what << "\ngc rc " << g.rc << "\n"
        << g.out;
    EXPECT_EQ(Snapshot(outside_), outside_before) << what << "\nsomething outside changed";

    // seal: a warmup's staging tree edited the same ways.
    const fs::path sroot = scratch_.path() / ("seal-" + std::to_string(t));
    PrepareOptions p;
    p.root = sroot;
    p.fingerprint = fp_;
    p.owner = "job-2";
    auto pr = Prepare(p);
    ASSERT_TRUE(pr.ok()) << pr.status();
    testing::WriteTritonCache(pr->staging, 1 + static_cast<int>(rng() % 2));
    const std::string swhat = "staging " + std::to_string(t) + ": " +
                              Describe(MutateContent(pr->staging, nullptr, &rng, t));
    Outcome s =
        Initwarm({"seal", "--root", sroot.string(), "--fingerprint", fp_, "--job-uid", "job-2"});
    ASSERT_NE(s.rc, 137) << swhat << "\nseal hung";
    if (s.rc == 0) {
      const fs::path spub = core::Layout(sroot).Published(fp_);
      auto sm = core::ParseManifest(ReadAll(spub / core::kManifestFileName));
      ASSERT_TRUE(sm.ok()) << swhat << ": " << sm.status();
      EXPECT_EQ(ListedStayInside(spub, *sm), "") << swhat << "\n" << s.out;
      EXPECT_FALSE(HoldsSecret(spub)) << swhat << "\n" << s.out;
    } else {
      EXPECT_EQ(s.rc, 12) << swhat << "\nseal\n" << s.out;
      EXPECT_TRUE(NamesAReason(s.out)) << swhat << "\nseal\n" << s.out;
    }
  }
  // The seed makes both outcomes occur; a change that refused everything
  // (or nothing) would show here.
  EXPECT_GT(refused, 0);
  EXPECT_GT(succeeded, 0);
  // Every kind of edit the header names was made, not left to the draw.
  EXPECT_EQ(content_kinds_.size(), 12u);
  EXPECT_EQ(meta_kinds_.size(), 8u);
  EXPECT_EQ(gc_kinds_.size(), 3u);
}

}  // namespace
}  // namespace kc::initwarm
