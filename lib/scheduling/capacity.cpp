#include "scheduling/capacity.h"

namespace sriovdra::scheduling {
namespace {

Result<Quantity> parse(const std::string& text, const std::string& what) {
  auto q = Quantity::parse(text);
  if (!q.ok()) return Status(Code::kInvalidArgument, what + ": " + q.status().message());
  return *q;
}

// Parses an optional quantity of the policy ("" = not set).
Result<std::optional<Quantity>> optional(const std::string& text, const std::string& what) {
  if (text.empty()) return std::optional<Quantity>();
  auto q = parse(text, what);
  if (!q.ok()) return q.status();
  return std::optional<Quantity>(*q);
}

struct Policy {
  std::optional<Quantity> default_value, min, max, step;
  std::vector<Quantity> valid_values;
  bool set = false;
};

Result<Policy> readPolicy(const api::SliceDevice& device, const std::string& name) {
  Policy p;
  auto it = device.request_policies.find(name);
  if (it == device.request_policies.end()) return p;
  p.set = true;
  const auto& in = it->second;
  std::string what = "device " + device.name + " capacity " + name;
  for (auto [text, out] :
       {std::pair{&in.default_value, &p.default_value}, std::pair{&in.min, &p.min},
        std::pair{&in.max, &p.max}, std::pair{&in.step, &p.step}}) {
    auto q = optional(*text, what);
    if (!q.ok()) return q.status();
    *out = *q;
  }
  if (p.step && p.step->roundedUp() <= 0) p.step.reset();  // the API refuses such a step
  for (const auto& v : in.valid_values) {
    auto q = parse(v, what);
    if (!q.ok()) return q.status();
    p.valid_values.push_back(*q);
  }
  return p;
}

// The requested amount rounded up by the policy (whole units in a range with a step).
Result<Quantity> roundUp(const Quantity& requested, const Policy& p) {
  if (p.min) {
    if (requested < *p.min) return *p.min;
    if (!p.step) return requested;
    __int128 min = p.min->roundedUp(), step = p.step->roundedUp();
    __int128 added = static_cast<__int128>(requested.roundedUp()) - min;
    __int128 n = added / step + (added % step != 0 ? 1 : 0);
    __int128 value = min + step * n;
    if (value > INT64_MAX) {
      return Status(Code::kInvalidArgument, "capacity request " + requested.text() +
                                                " cannot be rounded up to the next step");
    }
    return Quantity::ofInteger(static_cast<int64_t>(value));
  }
  for (const auto& v : p.valid_values) {
    if (requested <= v) return v;
  }
  return requested;
}

bool violates(const Quantity& amount, const Policy& p) {
  if (!p.set || (p.default_value && amount == *p.default_value)) return false;
  if (p.min) {
    if (p.max && amount > *p.max) return true;
    return p.step &&
           (static_cast<__int128>(amount.roundedUp()) - p.min->roundedUp()) % p.step->roundedUp() !=
               0;
  }
  if (p.valid_values.empty()) return false;
  for (const auto& v : p.valid_values) {
    if (amount == v) return false;
  }
  return true;
}

}  // namespace

Result<std::optional<Capacities>> capacityFor(const api::Quantities& requests,
                                              const api::SliceDevice& device) {
  for (const auto& [name, amount] : requests) {
    if (device.capacity.count(name) == 0) return std::optional<Capacities>();
  }
  // Every amount first (errors), then the policies, as kube-scheduler checks them.
  Capacities out;
  std::map<std::string, Policy> policies;
  for (const auto& [name, text] : device.capacity) {
    std::string what = "device " + device.name + " capacity " + name;
    auto value = parse(text, what);
    if (!value.ok()) return value.status();
    auto policy = readPolicy(device, name);
    if (!policy.ok()) return policy.status();
    Quantity amount = policy->default_value ? *policy->default_value : *value;
    if (auto r = requests.find(name); r != requests.end()) {
      auto requested = parse(r->second, "request for " + what);
      if (!requested.ok()) return requested.status();
      auto rounded = policy->set ? roundUp(*requested, *policy) : Result<Quantity>(*requested);
      if (!rounded.ok()) return rounded.status();
      amount = *rounded;
    }
    if (amount.sign() < 0) {
      return Status(Code::kInvalidArgument, what + ": negative amount " + amount.text());
    }
    out[name] = amount;
    policies[name] = std::move(*policy);
  }
  for (const auto& [name, amount] : out) {
    if (violates(amount, policies[name])) return std::optional<Capacities>();
  }
  return std::optional<Capacities>(std::move(out));
}

std::string capacityShortage(const Capacities& share, const Capacities& taken,
                             const api::SliceDevice& device) {
  for (const auto& [name, amount] : share) {
    const std::string& text = device.capacity.at(name);
    auto value = Quantity::parse(text);
    if (!value.ok()) return "capacity " + name + " is not a quantity: " + text;
    Quantity used;
    if (auto t = taken.find(name); t != taken.end()) used = t->second;
    if (*value < used + amount) {
      Quantity rest = *value - used;
      std::string out = "has ";
      out.append(rest.sign() < 0 ? "none" : rest.text()).append(" of ").append(text);
      return out.append(" ").append(name).append(" left");
    }
  }
  return "";
}

bool capacityFits(const Capacities& share, const Capacities& taken,
                  const api::SliceDevice& device) {
  return capacityShortage(share, taken, device).empty();
}

void addCapacities(Capacities& into, const Capacities& more, int sign) {
  for (const auto& [name, amount] : more) {
    Quantity& slot = into[name];
    slot = sign > 0 ? slot + amount : slot - amount;
  }
}

}  // namespace sriovdra::scheduling
