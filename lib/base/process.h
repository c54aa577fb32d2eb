#pragma once
// Child processes without a shell: argv is passed to execvp unchanged, so no user-controlled
// string is ever interpreted by /bin/sh. Used for kubeconfig exec credential plugins and by the
// test harness (etcd, kube-apiserver).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "base/status.h"

namespace sriovdra {

struct ProcessSpec {
  std::vector<std::string> argv;                         // argv[0] is looked up in PATH
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) environ
  std::string stdout_path;  // spawn(): append stdout here ("" = inherit); run(): ignored
  std::string stderr_path;  // spawn(): append stderr here ("" = inherit); run(): ignored
  // spawn(): stdin from this file or FIFO ("" = /dev/null); run(): ignored.
  std::string stdin_path;
  // run(): written to the child's stdin, which is then closed (none: /dev/null); spawn(): ignored.
  std::optional<std::string> stdin_data;
  // spawn(): the child gets SIGKILL when the thread that spawned it dies (PR_SET_PDEATHSIG), so
  // a crashed test never leaves servers behind. Spawn from a long-lived thread.
  bool kill_with_parent = false;
  // spawn(): the child starts a session of its own (setsid), as a daemon would: signals sent to
  // its process group (by it, its children or a terminal) never reach this process.
  bool new_session = false;
};

struct ProcessOutput {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Runs to completion with stdin from /dev/null, capturing stdout and stderr (each bounded by
// max_output bytes; more is an error). The child runs in a process group of its own; the timeout
// bounds the whole run, also a child that closed its outputs and keeps running, and when it
// passes (or the output is too large) the whole group is killed (SIGKILL): a plugin's own
// children too. Once the child exited, what its outputs hold is read and a process it left behind
// holding them open is not waited for.
Result<ProcessOutput> runProcess(const ProcessSpec& spec, std::chrono::milliseconds timeout,
                                 size_t max_output = 1 << 20);

// runProcess for a tool the host must have, its failures as a Status for people: kUnavailable
// when it could not run or finish in time, kNotFound with `missing` when argv[0] is not installed,
// kInternal "<what> exited with N: <what it printed>" when it fails. `what` names the call in
// messages. Returns its standard output.
Result<std::string> runTool(std::vector<std::string> argv, std::chrono::milliseconds timeout,
                            std::string_view what, std::string_view missing);

// A background child; the destructor kills it (SIGKILL) and reaps it.
class ChildProcess {
 public:
  static Result<ChildProcess> spawn(const ProcessSpec& spec);
  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // Sends sig; with wait, reaps the child (SIGKILL after grace if it does not exit).
  void stop(int sig, std::chrono::milliseconds grace = std::chrono::seconds(10));
  // Non-blocking: true (and the exit status) once the child has exited.
  bool exited(int* status = nullptr);

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

// Gives the free pages of this process's heap back to the kernel (glibc malloc_trim). Parsing a
// multi-megabyte object leaves that much free heap in each thread's arena, which the resident
// size would otherwise keep; call after such work, not in hot loops.
void trimHeap();

// Has every thread allocate from one glibc arena (M_ARENA_MAX 1) instead of one per thread, so
// memory one thread frees (an informer decoding a large object) serves the others' next
// allocations instead of staying stranded in its arena. For processes whose threads mostly wait
// on the network; call first thing in main, before any thread starts.
void useOneHeapArena();

}  // namespace sriovdra
