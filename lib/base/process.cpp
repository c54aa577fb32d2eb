#include "base/process.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace sriovdra {
namespace {

// Builds the child's environment: ours, with spec.env overriding or adding entries.
std::vector<std::string> childEnv(const ProcessSpec& spec) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    vars[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  for (const auto& [k, v] : spec.env) vars[k] = v;
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [k, v] : vars) out.push_back(std::string(k).append("=").append(v));
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&fa_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&fa_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &fa_; }

 private:
  posix_spawn_file_actions_t fa_{};
};

Result<pid_t> spawnWith(const ProcessSpec& spec, FileActions& fa, bool own_group = false) {
  if (spec.argv.empty()) return Status(Code::kInvalidArgument, "no command given");
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> env = childEnv(spec);
  auto argvp = pointers(argv);
  auto envp = pointers(env);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.new_session) flags |= POSIX_SPAWN_SETSID;
  if (own_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0].c_str(), fa.get(), &attr, argvp.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::fromErrno(rc, "starting " + spec.argv[0]);
  return pid;
}

}  // namespace

// Long on purpose: the child's whole life in the order it happens (spawn with its socket and
// pipes, one poll loop over stdin, stdout, stderr and the pidfd, then the reap within the
// deadline), so that the deadline and the kill of the process group visibly cover every path.
// NOLINTNEXTLINE(readability-function-size)
Result<ProcessOutput> runProcess(const ProcessSpec& spec, std::chrono::milliseconds timeout,
                                 size_t max_output) {
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return Status::fromErrno(errno, "pipe");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return Status::fromErrno(errno, "pipe");
  }
  // stdin is a socket pair, not a pipe: a child that exits before reading it all must not kill
  // this process with SIGPIPE (send() with MSG_NOSIGNAL).
  int in_pipe[2] = {-1, -1};
  if (spec.stdin_data && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pipe) != 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    return Status::fromErrno(errno, "pipe");
  }
  FileActions fa;
  if (spec.stdin_data) {
    posix_spawn_file_actions_adddup2(fa.get(), in_pipe[0], STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(fa.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(fa.get(), out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(fa.get(), err_pipe[1], STDERR_FILENO);
  auto pid = spawnWith(spec, fa, /*own_group=*/true);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (in_pipe[0] >= 0) ::close(in_pipe[0]);
  if (!pid.ok()) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    if (in_pipe[1] >= 0) ::close(in_pipe[1]);
    return std::move(pid).takeStatus();
  }

  ProcessOutput result;
  // stdout, stderr, the stdin still to write (-1 when there is none or it is written), and the
  // child itself (a pidfd turns readable when it exits).
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0));
  std::array<pollfd, 4> fds{pollfd{out_pipe[0], POLLIN, 0}, pollfd{err_pipe[0], POLLIN, 0},
                            pollfd{in_pipe[1], POLLOUT, 0}, pollfd{pidfd, POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  size_t written = 0;
  if (fds[2].fd >= 0 && spec.stdin_data->empty()) {
    ::close(fds[2].fd);
    fds[2].fd = -1;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  Status failure;
  int open_fds = 2;
  bool exited = pidfd < 0;  // without a pidfd (kernels before 5.3), wait for the outputs to close
  while (failure.isOk() && open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      failure = Status(Code::kTimeout, spec.argv[0] + " did not finish within " +
                                           std::to_string(timeout.count()) + " ms");
      break;
    }
    // Once the child exited, only what its outputs already hold is read: a process it left
    // behind may keep them open.
    int n =
        ::poll(fds.data(), fds.size(), exited && pidfd >= 0 ? 0 : static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) failure = Status::fromErrno(errno, "poll");
    if (n == 0 && exited && pidfd >= 0) break;
    if (fds[3].fd >= 0 && (fds[3].revents & POLLIN) != 0) {
      exited = true;
      fds[3].fd = -1;  // closed below
    }
    if (fds[2].fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
      ssize_t put = ::send(fds[2].fd, spec.stdin_data->data() + written,
                           spec.stdin_data->size() - written, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (put > 0) written += static_cast<size_t>(put);
      if ((put < 0 && errno != EINTR && errno != EAGAIN) || written == spec.stdin_data->size()) {
        ::close(fds[2].fd);  // all written, or the child stopped reading (EPIPE)
        fds[2].fd = -1;
      }
    }
    for (size_t i = 0; i < sinks.size(); ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[8192];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
        if (sinks[i]->size() > max_output) {
          failure = Status(Code::kInvalidArgument, spec.argv[0] + " wrote more than " +
                                                       std::to_string(max_output) + " bytes");
        }
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (size_t i = 0; i < 3; ++i) {
    if (fds[i].fd >= 0) ::close(fds[i].fd);
  }
  // A failed run takes its whole process group with it: a plugin's children, too.
  if (!failure.isOk()) ::kill(-*pid, SIGKILL);
  // The outputs closed (or the child exited) but it may still run: wait within the deadline.
  int status = 0;
  while (failure.isOk()) {
    pid_t r = ::waitpid(*pid, &status, WNOHANG);
    if (r == *pid || (r < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      failure =
          Status(Code::kTimeout, spec.argv[0] + " closed its output but did not exit within " +
                                     std::to_string(timeout.count()) + " ms");
      ::kill(-*pid, SIGKILL);
      break;
    }
    struct pollfd child {
      pidfd, POLLIN, 0
    };
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (pidfd >= 0) {
      ::poll(&child, 1, static_cast<int>(std::max<int64_t>(left.count(), 1)));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (!failure.isOk()) {
    while (::waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  if (!failure.isOk()) return failure;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

namespace {

// fork + exec with PR_SET_PDEATHSIG. Everything the child needs is prepared before fork(); the
// child only calls async-signal-safe functions.
Result<pid_t> forkWithDeathSignal(const ProcessSpec& spec) {
  if (spec.argv.empty()) return Status(Code::kInvalidArgument, "no command given");
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> env = childEnv(spec);
  auto argvp = pointers(argv);
  auto envp = pointers(env);
  pid_t parent = ::getpid();
  // Signals stay blocked from before fork() until the child has reset every handler: a signal
  // that reached the child before exec would run this process's handler there (a test
  // framework's, printing a failure that is not one).
  sigset_t all;
  sigset_t before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  pid_t pid = ::fork();
  if (pid != 0) ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) return Status::fromErrno(errno, "fork");
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    if (spec.new_session) ::setsid();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int in = ::open(spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path.c_str(), O_RDONLY);
    if (in >= 0) ::dup2(in, STDIN_FILENO);
    if (!spec.stdout_path.empty()) {
      int out = ::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (out >= 0) ::dup2(out, STDOUT_FILENO);
    }
    if (!spec.stderr_path.empty()) {
      int err = ::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (err >= 0) ::dup2(err, STDERR_FILENO);
    }
    ::execvpe(argvp[0], argvp.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

Result<ChildProcess> ChildProcess::spawn(const ProcessSpec& spec) {
  if (spec.kill_with_parent) {
    auto pid = forkWithDeathSignal(spec);
    if (!pid.ok()) return std::move(pid).takeStatus();
    return ChildProcess(*pid);
  }
  FileActions fa;
  posix_spawn_file_actions_addopen(fa.get(), STDIN_FILENO,
                                   spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path.c_str(),
                                   O_RDONLY, 0);
  if (!spec.stdout_path.empty()) {
    posix_spawn_file_actions_addopen(fa.get(), STDOUT_FILENO, spec.stdout_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  if (!spec.stderr_path.empty()) {
    posix_spawn_file_actions_addopen(fa.get(), STDERR_FILENO, spec.stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
  }
  auto pid = spawnWith(spec, fa);
  if (!pid.ok()) return std::move(pid).takeStatus();
  return ChildProcess(*pid);
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    stop(SIGKILL);
    pid_ = std::exchange(other.pid_, -1);
  }
  return *this;
}

ChildProcess::~ChildProcess() { stop(SIGKILL); }

void ChildProcess::stop(int sig, std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  ::kill(pid_, sig);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (!exited()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool ChildProcess::exited(int* status) {
  if (pid_ <= 0) return true;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    if (status != nullptr) *status = st;
    pid_ = -1;
    return true;
  }
  return false;
}

Result<std::string> runTool(std::vector<std::string> argv, std::chrono::milliseconds timeout,
                            std::string_view what, std::string_view missing) {
  auto r = runProcess({.argv = std::move(argv)}, timeout);
  // A path that does not exist fails the spawn; a name not in PATH exits 127 in the child.
  if ((!r.ok() && r.status().sysErrno() == ENOENT) ||
      (r.ok() && r->exit_code == 127 && r->err.empty()))
    return Status(Code::kNotFound, std::string(missing));
  if (!r.ok()) return Status(Code::kUnavailable, std::string(what) + ": " + r.status().message());
  if (r->exit_code != 0) {
    std::string said = r->err.empty() ? r->out : r->err;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    return Status(Code::kInternal,
                  std::string(what) + " exited with " + std::to_string(r->exit_code) + ": " + said);
  }
  return std::move(r->out);
}

void trimHeap() { malloc_trim(0); }

void useOneHeapArena() { mallopt(M_ARENA_MAX, 1); }

}  // namespace sriovdra
