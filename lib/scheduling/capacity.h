#pragma once
// Consumable capacity (resource.k8s.io/v1, beta and on by default in Kubernetes 1.37) as
// kube-scheduler's allocator computes it: a device with allowMultipleAllocations serves many
// requests at once, each taking a share of its capacities; a request asks for amounts in
// capacity.requests, which the capacity's requestPolicy rounds up (to the next valid value, or to
// min + k * step in the valid range). Whole units, as with DRAFractionalCapacityRange off (its
// 1.37 default): range arithmetic rounds every quantity up to an integer first. Pure.
#include <map>
#include <optional>
#include <string>

#include "api/resource.h"
#include "base/status.h"
#include "scheduling/quantity.h"

namespace sriovdra::scheduling {

using Capacities = std::map<std::string, Quantity>;  // capacity name -> amount

// What one allocation of `device` for a request with these capacity.requests takes, for every
// capacity of the device: the requested amount rounded up by the capacity's policy, or, for a
// capacity the request does not name, the policy's default or else the whole capacity.
// nullopt when the device can never serve the request: it lacks a requested capacity, or an
// amount breaks the policy (above max, off the step, not a valid value).
// InvalidArgument: a quantity that does not parse, a negative amount, a rounding that overflows.
Result<std::optional<Capacities>> capacityFor(const api::Quantities& requests,
                                              const api::SliceDevice& device);

// Whether `share` fits the device beside `taken` (the shares allocated and picked so far): no
// capacity would be consumed beyond its value.
bool capacityFits(const Capacities& share, const Capacities& taken, const api::SliceDevice& device);
// Why it does not, naming the first capacity short: "has 10G of 100G bandwidth left" ("" when it
// fits).
std::string capacityShortage(const Capacities& share, const Capacities& taken,
                             const api::SliceDevice& device);

// into += more (sign 1) or into -= more (sign -1), capacity by capacity.
void addCapacities(Capacities& into, const Capacities& more, int sign);

}  // namespace sriovdra::scheduling
