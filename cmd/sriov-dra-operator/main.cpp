// sriov-dra-operator: renders policies into per-node SriovNodeStates, maintains DeviceClasses,
// reports policy status, serves the admission webhook. Flags (process::addOperatorFlags) ->
// process::runOperator.
#include <CLI/CLI.hpp>

#include "base/log.h"
#include "base/process.h"
#include "base/signals.h"
#include "operator/operator_process.h"

using namespace sriovdra;

int main(int argc, char** argv) {
  useOneHeapArena();  // before any thread: its threads mostly wait on the API server
  ShutdownSignals signals;
  CLI::App app{
      "sriov-dra-operator: SR-IOV policies -> per-node device configuration and DRA "
      "DeviceClasses"};
  process::OperatorProcessOptions o;
  process::addOperatorFlags(app, o);
  CLI11_PARSE(app, argc, argv);
  log::setVerbosity(o.operator_.verbosity);
  return process::runOperator(std::move(o), signals);
}
