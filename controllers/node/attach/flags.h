#pragma once
// The agent's flags for standalone mode's CNI: where the plugins are and what a
// NetworkAttachmentDefinition may run (cni/allow.h), into AttacherOptions.
#include <CLI/CLI.hpp>

#include "node/attach/attacher.h"

namespace sriovdra::attach {

void addAttachFlags(CLI::App& app, AttacherOptions& options);

// Two digits: an NRI plugin's index among the runtime's plugins.
CLI::Validator nriPluginIndex();

}  // namespace sriovdra::attach
