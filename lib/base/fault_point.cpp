#include "base/fault_point.h"

#include <atomic>

namespace sriovdra::fault {
namespace {

std::atomic<Handler> handler{nullptr};

}  // namespace

void setHandler(Handler h) { handler.store(h); }

void point(std::string_view name) {
  if (Handler h = handler.load()) h(name);
}

}  // namespace sriovdra::fault
