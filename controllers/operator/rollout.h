#pragma once
// Rollout rules for reconfiguring nodes (pure). Changing a PF that already has VFs tears its VFs
// down (sysfs needs 0 before a new count), so at most --max-unavailable nodes may be in such a
// change at once; going from 0 VFs to N, raising an MTU, or changing only the advertised devices
// is not limited. A reboot the agent asks for is limited the same way.
#include <optional>
#include <string>

#include "api/node_state.h"

namespace sriovdra::op {

// What in applying `desired` over `current` disturbs VFs that exist (per status), for people
// ("PF 0000:0e:00.0: 1 VF now, 4 wanted"), or nullopt: a VF count other than the PF's current one,
// changed VF groups, eSwitch mode or link type of a PF that was already configured, or removing a
// configured PF from the spec (it is reset to 0 VFs). The first such PF is named.
std::optional<std::string> disruption(const api::SriovNodeStateSpec& current,
                                      const api::SriovNodeStateSpec& desired,
                                      const api::SriovNodeStateStatus& status);

// True while the agent has not finished applying the latest spec.
bool isReconfiguring(const api::SriovNodeState& state);

// True while the agent asks for a reboot to apply the latest spec (its condition RebootRequired
// is True for the state's generation; host/reboot.h). The reboot takes a rollout slot as a
// change that tears down VFs does, and is granted after the drain (drain_reconciler.h).
bool rebootRequested(const api::SriovNodeState& state);

}  // namespace sriovdra::op
