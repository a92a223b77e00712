#include "initwarm/gpu/isolated_run.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>

namespace kc::initwarm {
namespace {

bool WriteAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool SendStatus(int fd, const Status& s) {
  auto code = static_cast<int32_t>(s.code());
  auto len = static_cast<uint32_t>(s.message().size());
  return WriteAll(fd, &code, sizeof(code)) && WriteAll(fd, &len, sizeof(len)) &&
         WriteAll(fd, s.message().data(), len);
}

std::optional<Status> ReadStatus(int fd) {
  int32_t code = 0;
  uint32_t len = 0;
  if (!ReadAll(fd, &code, sizeof(code)) || !ReadAll(fd, &len, sizeof(len))) return std::nullopt;
  std::string msg(len, '\0');
  if (!ReadAll(fd, msg.data(), len)) return std::nullopt;
  if (code == 0) return OkStatus();
  return Status(static_cast<StatusCode>(code), std::move(msg));
}

[[noreturn]] void Serve(int fd, const IsolatedProcess::Init& init) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  StatusOr<IsolatedProcess::Handler> handler = init();
  if (!SendStatus(fd, handler.status())) _exit(1);
  if (!handler.ok()) _exit(0);
  for (;;) {
    uint32_t name_len = 0;
    uint64_t payload_len = 0;
    if (!ReadAll(fd, &name_len, sizeof(name_len)) ||
        !ReadAll(fd, &payload_len, sizeof(payload_len))) {
      _exit(0);  // parent closed: done
    }
    std::string name(name_len, '\0');
    std::string payload(payload_len, '\0');
    if (!ReadAll(fd, name.data(), name_len) || !ReadAll(fd, payload.data(), payload_len)) _exit(1);
    if (!SendStatus(fd, (*handler)(name, payload))) _exit(1);
  }
}

std::string DescribeExit(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    return "killed by signal " + std::to_string(WTERMSIG(wstatus)) + " (" +
           strsignal(WTERMSIG(wstatus)) + ")";
  }
  if (WIFEXITED(wstatus)) return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
  return "ended";
}

}  // namespace

StatusOr<std::unique_ptr<IsolatedProcess>> IsolatedProcess::Start(std::string what, Init init) {
  std::unique_ptr<IsolatedProcess> p(new IsolatedProcess(std::move(what), std::move(init)));
  KC_RETURN_IF_ERROR(p->Fork());
  return p;
}

IsolatedProcess::~IsolatedProcess() { Stop(); }

std::optional<Status> IsolatedProcess::Call(std::string_view name, std::string_view payload,
                                            std::string* died) {
  if (pid_ <= 0) {
    if (Status s = Fork(); !s.ok()) return s;
  }
  auto name_len = static_cast<uint32_t>(name.size());
  auto payload_len = static_cast<uint64_t>(payload.size());
  const bool sent = WriteAll(fd_, &name_len, sizeof(name_len)) &&
                    WriteAll(fd_, &payload_len, sizeof(payload_len)) &&
                    WriteAll(fd_, name.data(), name.size()) &&
                    WriteAll(fd_, payload.data(), payload.size());
  std::optional<Status> reply;
  if (sent) reply = ReadStatus(fd_);
  if (reply) return reply;
  std::string how = Stop();
  if (died != nullptr) *died = how;
  return std::nullopt;
}

Status IsolatedProcess::Fork() {
  std::array<int, 2> sv{};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv.data()) != 0) {
    return InternalError(std::string("socketpair: ") + strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return InternalError(std::string("fork: ") + strerror(errno));
  }
  if (pid == 0) {
    close(sv[0]);
    Serve(sv[1], init_);
  }
  close(sv[1]);
  fd_ = sv[0];
  pid_ = pid;
  std::optional<Status> hello = ReadStatus(fd_);
  if (!hello) {
    std::string how = Stop();
    return UnavailableError(what_ + " process " + how + " while starting");
  }
  if (!hello->ok()) {
    Stop();
    return *hello;
  }
  return OkStatus();
}

std::string IsolatedProcess::Stop() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  std::string how = "ended";
  if (pid_ > 0) {
    int wstatus = 0;
    while (waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
    }
    how = DescribeExit(wstatus);
  }
  pid_ = -1;
  return how;
}

}  // namespace kc::initwarm
