#include "base/signals.h"

#include <cstdlib>

#include <pthread.h>
#include <signal.h>

#include "base/log.h"

namespace sriovdra {

ShutdownSignals::ShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR1);  // used internally to wake the waiter on destruction
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  waiter_ = std::thread([this, set] {
    for (;;) {
      int sig = 0;
      sigwait(&set, &sig);
      if (sig == SIGUSR1) return;
      if (signal_ != 0) {
        SDRA_LOG_WARN << "second shutdown signal: exiting now";
        std::_Exit(1);
      }
      signal_ = sig;
      SDRA_LOG_INFO << "received " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
                    << ", shutting down (send it again to exit at once)";
      source_.request_stop();
    }
  });
}

ShutdownSignals::~ShutdownSignals() {
  pthread_kill(waiter_.native_handle(), SIGUSR1);
  waiter_.join();
}

}  // namespace sriovdra
