#pragma once
// The VF settings an SR-IOV CNI plugin makes through the VF's PF (internal to
// controllers/node/cni), in upstream's order and words:
//   SriovPfSettings  the sriov plugin's (upstream's ApplyVFConfig and ResetVFConfig): VLAN with
//                    QoS and protocol, administrative MAC, rates, spoofchk, trust, link state;
//                    apply() stops at the first refusal, reset() puts back each setting the
//                    configuration names (and the administrative MAC the VF had) that the PF
//                    does not report at its original value already, trying all: a setting the
//                    driver refused at ADD (igb: a link state) does not fail DEL.
//   setLinkState     a VF's link state (both plugins).
//   setNetdevMac     a netdev's own MAC in the calling thread's namespace.
// A MAC set either way is read back until it shows, 5 tries 20 ms apart (some drivers apply it
// late; upstream tries 20 times 100 ms apart, longer than a runtime gives a pod's network).
#include <string>

#include "base/status.h"
#include "host/netdev.h"
#include "host/netlink.h"
#include "sriovcni/netconf.h"

namespace sriovdra::cni_plugin {

class SriovPfSettings {
 public:
  // `conf` (its master, vf_id, settings and original state) must outlive this.
  SriovPfSettings(host::Netlink& netlink, const sriovcni::NetConf& conf)
      : nl_(netlink), conf_(conf) {}
  Status apply();
  Status reset();

 private:
  host::VfSetting setting(host::VfSetting::Kind kind) const;
  Status setAdminMac(const std::string& mac);
  host::Netlink& nl_;
  const sriovcni::NetConf& conf_;
};

Status setLinkState(host::Netlink& netlink, const std::string& pf, int64_t vf, uint32_t state);

// Sets the MAC of the netdev `name` and reads it back until it shows (upstream's verify loop);
// a netdev that already has it is left alone (a driver that refuses MAC changes, or refuses them
// while the VF is up, fails no DEL that has nothing to restore).
Status setNetdevMac(const host::Netdevs& netdevs, const std::string& name, const std::string& mac);

}  // namespace sriovdra::cni_plugin
