#pragma once
// Graceful shutdown on SIGTERM/SIGINT for the mains: the signals are blocked in every thread
// and a dedicated thread waits for them with sigwait(2) and requests stop on a stop_source.
// Construct it first in main(), before any other thread starts, so all threads inherit the mask.
// A second signal exits the process at once.
#include <stop_token>
#include <thread>

namespace sriovdra {

class ShutdownSignals {
 public:
  ShutdownSignals();
  ~ShutdownSignals();
  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;

  std::stop_token token() const { return source_.get_token(); }
  int signal() const { return signal_; }

 private:
  std::stop_source source_;
  int signal_ = 0;
  std::thread waiter_;
};

}  // namespace sriovdra
