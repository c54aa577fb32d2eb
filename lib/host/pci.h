#pragma once
// PCI addresses: "0000:0e:00.1" <-> (domain, bus, device, function) and routing ids, and runs of
// evenly spaced addresses.
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
  // Domain and routing id as one number, ordered as the canonical spellings are.
  uint64_t key() const { return uint64_t{domain} << 16 | routingId(); }
  std::string toString() const;  // "0000:0e:00.1"
  bool operator==(const PciAddress&) const = default;
};

// Addresses whose routing ids step evenly within one domain, as the VFs of a PF do: VF n sits at
// the PF's routing id + First VF Offset + n x VF Stride (PCIe SR-IOV capability), so a PF's VFs
// are one run however many there are. Only canonical addresses (toString() of themselves: lower
// case, zero padded) join a run, so at(i) gives back the very string that was added.
class PciRun {
 public:
  // Adds the address when it continues the run (any address starts an empty run; the second
  // fixes the stride); false when it does not, and the run is unchanged.
  bool extend(std::string_view bdf);
  uint32_t size() const { return count_; }
  std::string at(uint32_t i) const;  // i < size()
  // The index of the address in the run, nullopt when it is not in it.
  std::optional<uint32_t> indexOf(std::string_view bdf) const;
  auto operator<=>(const PciRun&) const = default;  // NOLINT(modernize-use-nullptr)

 private:
  uint32_t domain_ = 0;
  uint32_t first_ = 0;   // routing id of at(0)
  uint32_t stride_ = 0;  // routing ids from one address to the next; 0 until size() > 1
  uint32_t count_ = 0;
};

// True for a string shaped like a PCI address.
bool isPciAddress(std::string_view s);
// Drivers that hand the device to user space (DPDK, VMs) instead of the kernel network stack.
bool isUserspaceDriver(std::string_view driver);

}  // namespace sriovdra::host
