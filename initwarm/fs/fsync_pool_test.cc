#include "initwarm/fs/fsync_pool.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>

#include "initwarm/fs/hasher.h"
#include "initwarm/testing/test_util.h"

namespace kc::initwarm {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

std::vector<int> OpenFiles(const testing::ScratchDir& d, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    auto p = d.path() / ("f" + std::to_string(i));
    testing::WriteFile(p, testing::Bytes(4096, static_cast<std::uint32_t>(i)));
    fds.push_back(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  }
  return fds;
}

TEST(FsyncPool, SyncsAndClosesEveryDescriptor) {
  testing::ScratchDir d;
  std::vector<int> fds = OpenFiles(d, 40);
  std::atomic<std::uint64_t> synced{0};
  FsyncPool pool(4, /*max_pending=*/3, [&](std::uint64_t) { ++synced; });
  for (int fd : fds) pool.Add(fd, "f");
  EXPECT_TRUE(pool.Finish().ok());
  EXPECT_EQ(synced.load(), 40u);
  for (int fd : fds) EXPECT_FALSE(IsOpen(fd)) << fd;
  EXPECT_TRUE(pool.Finish().ok());  // idempotent
}

TEST(FsyncPool, FirstErrorNamesTheFileAndTheRestAreClosedUnsynced) {
  testing::ScratchDir d;
  std::vector<int> fds = OpenFiles(d, 5);
  std::uint64_t synced = 0;
  FsyncPool pool(1, 16, [&](std::uint64_t n) { synced = n; });  // one thread: in order
  pool.Add(1 << 20, "no-such-descriptor");                      // EBADF
  for (int fd : fds) pool.Add(fd, "f");
  Status s = pool.Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("fsync no-such-descriptor"), std::string::npos) << s;
  EXPECT_TRUE(pool.failed());
  EXPECT_EQ(synced, 0u);
  for (int fd : fds) EXPECT_FALSE(IsOpen(fd)) << fd;
}

TEST(FsyncPool, EinvalIsSuccess) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);  // fsync on a pipe: EINVAL, as on objects a filesystem cannot sync
  FsyncPool pool(2);
  pool.Add(p[0], "pipe");
  pool.Add(p[1], "pipe");
  EXPECT_TRUE(pool.Finish().ok());
}

TEST(HashFilesFsync, EveryFileSyncedBeforeItReturns) {
  testing::ScratchDir d;
  std::vector<HashJob> jobs;
  for (int i = 0; i < 30; ++i) {
    auto p = d.path() / ("f" + std::to_string(i));
    testing::WriteFile(
        p, testing::Bytes(1000 + static_cast<std::uint64_t>(i), static_cast<std::uint32_t>(i)));
    jobs.push_back({p, 1000 + static_cast<std::uint64_t>(i)});
  }
  HashOptions o;
  o.threads = 3;
  o.fsync = true;
  o.fsync_threads = 5;
  std::atomic<std::uint64_t> synced{0};
  o.on_fsynced = [&](std::uint64_t) { ++synced; };
  auto sums = HashFiles(jobs, o);
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_EQ(synced.load(), 30u);
  std::uint64_t size = 0;
  EXPECT_EQ((*sums)[7], *HashFile(jobs[7].path, &size));
  // Without fsync, no pool.
  o.fsync = false;
  synced = 0;
  ASSERT_TRUE(HashFiles(jobs, o).ok());
  EXPECT_EQ(synced.load(), 0u);
}

}  // namespace
}  // namespace kc::initwarm
