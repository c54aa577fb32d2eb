#pragma once
// VfConfig: this driver's opaque device configuration (apiVersion
// sriovnetwork.k8snetworkplumbingwg.io/v1alpha1, kind VfConfig), read strictly like the reference
// driver (unknown fields and wrong types are errors naming the field), and merged per request:
// DeviceClass configs first, then claim configs, a later config wins field by field, except the
// driver: one a DeviceClass config sets cannot be changed by the claim (an error). Unlike the
// reference driver every field survives the merge (it drops addVhostMount and
// netAttachDefNamespace; we keep the latter so that prepare can refuse a namespace that is not the
// claim's instead of silently ignoring it). Values that end up in sysfs paths or interface names
// are validated. Pure.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/codec.h"
#include "api/resource.h"
#include "base/status.h"

namespace sriovdra::dra {

inline constexpr std::string_view kVfConfigApiVersion =
    "sriovnetwork.k8snetworkplumbingwg.io/v1alpha1";
inline constexpr std::string_view kVfConfigKind = "VfConfig";

struct VfConfig {
  std::optional<std::string> driver;  // "" or unset: leave; "default": the VF's own; else a driver
  std::optional<std::string> if_name;
  std::optional<std::string> net_attach_def_name;
  std::optional<std::string> net_attach_def_namespace;
  std::optional<bool> add_vhost_mount;
  bool operator==(const VfConfig&) const = default;

  // Fields set in `later` replace these.
  void mergeFrom(const VfConfig& later);
  // The driver the VF must be bound to: nullopt = leave it as it is, "" = its default driver.
  std::optional<std::string> targetDriver() const;
  // Whether a VF on `current_driver` stays a network interface once prepared with this config:
  // its target driver (else the current one) is not a userspace driver.
  bool keepsNetdev(const std::string& current_driver) const;
  // With apiVersion and kind, only the fields that are set.
  void encode(api::Writer w) const;
  static Result<VfConfig> decode(const json::Value& v);  // lenient: for our own checkpoint
};

// Strict: `parameters_json` is the opaque parameters object of a config for this driver.
Result<VfConfig> parseVfConfig(std::string_view parameters_json);

// The effective VfConfig of each request name in `allocation` that has a result for `driver`
// ("req" and "req/sub" alike). A config that fails to parse is an error naming its position
// ("config[1] (FromClaim): ifName: expected a string").
Result<std::map<std::string, VfConfig>> vfConfigsByRequest(const api::AllocationResult& allocation,
                                                           std::string_view driver);

}  // namespace sriovdra::dra
