#include "host/simulated_faults.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "base/fault_point.h"
#include "base/log.h"

namespace sriovdra::host {
namespace {

// Set once before threads start (stopAtArmedFaultPoints), read-only afterwards.
std::string& faultDir() {
  static std::string dir;
  return dir;
}

void stopIfArmed(std::string_view point) {
  const std::string base = faultDir() + "/" + std::string(point);
  if (std::rename(base.c_str(), (base + ".reached").c_str()) != 0) return;
  SDRA_LOG_WARN << "SIMULATION: stopped at fault point " << point << " until " << base
                << ".release exists";
  std::error_code ec;
  while (!std::filesystem::remove(base + ".release", ec)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  SDRA_LOG_WARN << "SIMULATION: released at fault point " << point;
}

}  // namespace

void stopAtArmedFaultPoints(const std::string& dir) {
  faultDir() = dir;
  fault::setHandler(&stopIfArmed);
}

}  // namespace sriovdra::host
