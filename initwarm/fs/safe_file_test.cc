#include "initwarm/fs/safe_file.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::WriteFile;

// Every case runs with openat2 (where this kernel has it) and with the
// component walk the other kernels get; both must refuse alike.
class SafeFileTest : public ::testing::TestWithParam<Resolve> {
 protected:
  void SetUp() override {
    cache_ = scratch_.path() / "cache";
    outside_ = scratch_.path() / "outside";
    WriteFile(cache_ / "triton/aa/k.cubin", "cubin");
    WriteFile(outside_ / "secret", "SECRET");
    auto d = SafeDir::OpenTrusted(cache_, GetParam());
    ASSERT_TRUE(d.ok()) << d.status();
    dir_.emplace(std::move(*d));
  }
  // `s` failed as a refusal whose message contains `what`.
  static void ExpectRefused(const Status& s, const std::string& what) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_NE(s.message().find(what), std::string::npos) << s;
    EXPECT_EQ(s.message().find("SECRET"), std::string::npos) << s;
  }
  testing::ScratchDir scratch_;
  fs::path cache_, outside_;
  std::optional<SafeDir> dir_;
};

TEST_P(SafeFileTest, ReadsARegularFileBeneathWithinItsBound) {
  auto r = dir_->ReadFile("triton/aa/k.cubin", 5);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "cubin");
  auto big = dir_->ReadFile("triton/aa/k.cubin", 4);
  EXPECT_EQ(big.status().code(), StatusCode::kFailedPrecondition) << big.status();
  EXPECT_NE(big.status().message().find("larger than 4 bytes"), std::string::npos);
  EXPECT_EQ(dir_->ReadFile("triton/aa/none", 5).status().code(), StatusCode::kNotFound);
}

TEST_P(SafeFileTest, RefusesALastComponentSymlinkAbsoluteOrRelative) {
  fs::create_symlink(outside_ / "secret", cache_ / "triton/aa/abs");
  fs::create_symlink("../../../outside/secret", cache_ / "triton/aa/rel");
  fs::create_symlink("k.cubin", cache_ / "triton/aa/inside");  // even inside: never followed
  for (const char* name : {"triton/aa/abs", "triton/aa/rel", "triton/aa/inside"}) {
    ExpectRefused(dir_->ReadFile(name, 1 << 20).status(), "is a symlink");
  }
}

TEST_P(SafeFileTest, RefusesASymlinkInAnIntermediateDirectory) {
  fs::create_symlink(outside_, cache_ / "triton/bb");
  ExpectRefused(dir_->ReadFile("triton/bb/secret", 1 << 20).status(),
                "is a symlink, not a directory");
  ExpectRefused(dir_->Dir("triton/bb").status(), "is a symlink, not a directory");
  ExpectRefused(dir_->Stat("triton/bb/secret").status(), "is a symlink, not a directory");
}

TEST_P(SafeFileTest, RefusesPathsThatLeaveTheAnchor) {
  for (const char* rel : {"../outside/secret", "/etc/passwd", "triton/../../outside/secret"}) {
    Status s = dir_->ReadFile(rel, 1 << 20).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << rel << ": " << s;
  }
}

// A FIFO is refused without being opened: the reader never blocks on it.
TEST_P(SafeFileTest, RefusesAFifoWithoutBlocking) {
  ASSERT_EQ(::mkfifo((cache_ / "triton/aa/fifo").c_str(), 0644), 0) << std::strerror(errno);
  ExpectRefused(dir_->ReadFile("triton/aa/fifo", 1 << 20).status(), "is a FIFO");
  ExpectRefused(dir_->OpenFile("triton/aa/fifo").status(), "is a FIFO");
  auto st = dir_->Stat("triton/aa/fifo");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->kind, EntryKind::kFifo);
}

TEST_P(SafeFileTest, RefusesASocket) {
  const fs::path sock = cache_ / "s";
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.string().size(), sizeof(addr.sun_path));
  std::strncpy(addr.sun_path, sock.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
      << std::strerror(errno);
  ExpectRefused(dir_->ReadFile("s", 1 << 20).status(), "is a socket");
  ::close(fd);
}

TEST_P(SafeFileTest, RefusesAHardLinkWhenOneNameIsAsked) {
  fs::create_hard_link(outside_ / "secret", cache_ / "triton/aa/hard");
  ExpectRefused(dir_->ReadFile("triton/aa/hard", 1 << 20, true).status(), "has 2 hard links");
  auto lenient = dir_->ReadFile("triton/aa/hard", 1 << 20);
  ASSERT_TRUE(lenient.ok()) << lenient.status();
  EXPECT_EQ(*lenient, "SECRET");  // same filesystem, same inode: why seal and verify ask
}

TEST_P(SafeFileTest, RemoveNeverFollowsALink) {
  fs::create_symlink(outside_, cache_ / "triton/aa/out");
  fs::create_symlink(outside_ / "secret", cache_ / "triton/file-link");
  ASSERT_TRUE(dir_->Remove("triton").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(cache_ / "triton")));
  EXPECT_EQ(ReadFile(outside_ / "secret"), "SECRET");
  EXPECT_TRUE(dir_->Remove("never-was").ok());
}

TEST_P(SafeFileTest, ReadLinkAndStatDoNotFollow) {
  fs::create_symlink("../bb/k.cubin", cache_ / "triton/aa/l");
  auto t = dir_->ReadLink("triton/aa/l");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, "../bb/k.cubin");
  auto st = dir_->Stat("triton/aa/l");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->kind, EntryKind::kSymlink);
  auto f = dir_->Stat("triton/aa/k.cubin");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->kind, EntryKind::kRegular);
  EXPECT_EQ(f->size, 5u);
}

TEST_P(SafeFileTest, OpenUnderResolvesFromTheAnchorWithoutLinks) {
  fs::create_symlink(outside_, scratch_.path() / "v1");
  auto under = SafeDir::OpenUnder(scratch_.path(), scratch_.path() / "v1", GetParam());
  ExpectRefused(under.status(), "is a symlink, not a directory");
  auto ok = SafeDir::OpenUnder(scratch_.path(), cache_ / "triton", GetParam());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->ReadFile("aa/k.cubin", 5).ok());
}

INSTANTIATE_TEST_SUITE_P(Resolve, SafeFileTest, ::testing::Values(Resolve::kAuto, Resolve::kWalk),
                         [](const auto& info) {
                           return info.param == Resolve::kAuto ? std::string("Openat2OrWalk")
                                                               : std::string("Walk");
                         });

TEST(SafeFile, ReadFileNoFollowRefusesALink) {
  testing::ScratchDir d;
  WriteFile(d.path() / "real", "x");
  fs::create_symlink(d.path() / "real", d.path() / "lock");
  EXPECT_EQ(ReadFileNoFollow(d.path() / "lock", 10).status().code(), StatusCode::kInvalidArgument);
  auto r = ReadFileNoFollow(d.path() / "real", 10);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "x");
}

TEST(SafeFile, KindNames) {
  EXPECT_EQ(EntryKindName(KindOfMode(S_IFIFO | 0644)), "FIFO");
  EXPECT_EQ(EntryKindName(KindOfMode(S_IFCHR | 0644)), "character device");
  EXPECT_EQ(EntryKindName(KindOfMode(S_IFBLK | 0644)), "block device");
  EXPECT_EQ(EntryKindName(KindOfMode(S_IFSOCK | 0644)), "socket");
  EXPECT_EQ(EntryKindName(KindOfMode(S_IFLNK | 0777)), "symlink");
}

}  // namespace
}  // namespace kc::initwarm
