// prepare and the uid/gid contract (docs/permissions.md): the modes of what
// it creates, and a volume it may not write.
#include "initwarm/cache/prepare.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/fingerprint.h"
#include "core/layout.h"
#include "core/security_context.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNonRoot = 65532;  // the initwarm image's user

unsigned Mode(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

class PrepareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = dir_.path() / "export";
    fp_ = core::ComputeFingerprint(testing::H200Facts(), testing::TestRuntime()).id;
  }

  PrepareOptions Opts() const {
    PrepareOptions o;
    o.root = root_;
    o.fingerprint = fp_;
    o.owner = "job-1";
    o.view = dir_.path() / "run" / "view";
    return o;
  }

  testing::ScratchDir dir_;
  fs::path root_;
  std::string fp_;
};

TEST_F(PrepareTest, CreatesSetgidGroupWritableDirectories) {
  auto r = Prepare(Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  core::Layout l(root_);
  for (const fs::path& d : {fs::path(root_), l.VersionDir(), l.StagingRoot(), l.InboxRoot(),
                            r->staging, r->staging / "triton", r->staging / "nv"}) {
    EXPECT_EQ(Mode(d), core::kCacheDirMode) << d << " is 0" << std::oct << Mode(d);
  }
}

TEST_F(PrepareTest, ExistingDirectoriesKeepTheirMode) {
  fs::create_directories(root_);
  ASSERT_EQ(::chmod(root_.c_str(), 0750), 0);
  auto r = Prepare(Opts());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Mode(root_), 0750u) << "prepare must not change the export itself";
}

// A fresh NFS export or hostPath is root:root 0755, and fsGroup does not
// apply to it: the non-root prepare cannot write it. It must fail with
// PermissionDenied whose message is the fix (not a crash, not "error").
// As root (CI), the failing writer is a child that dropped to 65532; as
// any other user, an export of our own that is not writable (0555).
TEST_F(PrepareTest, RootOwnedExportIsPermissionDeniedWithTheFix) {
  fs::create_directories(root_);
  uid_t uid = ::geteuid();
  gid_t gid = ::getegid();
  StatusCode code = StatusCode::kOk;
  std::string message;
  if (uid == 0) {
    ASSERT_EQ(::chown(root_.c_str(), 0, 0), 0);
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);  // the child can reach it
    uid = gid = kNonRoot;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      std::string out;
      if (::setgroups(0, nullptr) != 0 || ::setgid(kNonRoot) != 0 || ::setuid(kNonRoot) != 0) {
        out = "X cannot drop privileges: " + std::string(std::strerror(errno));
      } else {
        auto r = Prepare(Opts());
        out = std::to_string(static_cast<int>(r.ok() ? StatusCode::kOk : r.status().code())) + " " +
              (r.ok() ? std::string() : r.status().message());
      }
      ssize_t ignored = ::write(fds[1], out.data(), out.size());
      (void)ignored;
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;) out.append(buf, n);
    ::close(fds[0]);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);
    ASSERT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "child crashed: " << out;
    ASSERT_FALSE(out.empty() || out[0] == 'X') << out;
    const size_t space = out.find(' ');
    code = static_cast<StatusCode>(std::stoi(out.substr(0, space)));
    message = out.substr(space + 1);
  } else {
    ASSERT_EQ(::chmod(root_.c_str(), 0555), 0);
    auto r = Prepare(Opts());
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);  // so the scratch dir can be removed
    code = r.ok() ? StatusCode::kOk : r.status().code();
    message = r.ok() ? "" : r.status().message();
  }
  ASSERT_EQ(code, StatusCode::kPermissionDenied) << message;
  EXPECT_NE(message.find("mkdir -p " + (root_ / "v1").string()), std::string::npos) << message;
  EXPECT_NE(message.find(core::ExportFix(root_.string(), uid, gid)), std::string::npos) << message;
  EXPECT_TRUE(fs::is_empty(root_)) << "nothing may be half-created";
}

}  // namespace
}  // namespace kc::initwarm
