#pragma once
// PCI addresses: "0000:0e:00.1" <-> (domain, bus, device, function) and routing ids.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sriovdra::host {

struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t device = 0;
  uint32_t function = 0;
  static std::optional<PciAddress> parse(std::string_view bdf);
  // Requester id within the domain: bus << 8 | device << 3 | function.
  uint32_t routingId() const { return bus << 8 | device << 3 | function; }
  static PciAddress fromRoutingId(uint32_t domain, uint32_t rid);
  std::string toString() const;  // "0000:0e:00.1"
  bool operator==(const PciAddress&) const = default;
};

// True for a string shaped like a PCI address.
bool isPciAddress(std::string_view s);
// Drivers that hand the device to user space (DPDK, VMs) instead of the kernel network stack.
bool isUserspaceDriver(std::string_view driver);

}  // namespace sriovdra::host
