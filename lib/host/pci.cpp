#include "host/pci.h"

#include <cstdio>

namespace sriovdra::host {

std::optional<PciAddress> PciAddress::parse(std::string_view bdf) {
  if (bdf.size() != 12 || bdf[4] != ':' || bdf[7] != ':' || bdf[10] != '.') return std::nullopt;
  auto hex = [](std::string_view s, uint32_t* out) {
    uint32_t v = 0;
    for (char c : s) {
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return false;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    *out = v;
    return true;
  };
  PciAddress a;
  if (!hex(bdf.substr(0, 4), &a.domain) || !hex(bdf.substr(5, 2), &a.bus) ||
      !hex(bdf.substr(8, 2), &a.device) || !hex(bdf.substr(11, 1), &a.function) || a.device > 31 ||
      a.function > 7) {
    return std::nullopt;
  }
  return a;
}

PciAddress PciAddress::fromRoutingId(uint32_t domain, uint32_t rid) {
  return {domain, (rid >> 8) & 0xff, (rid >> 3) & 0x1f, rid & 0x7};
}

std::string PciAddress::toString() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

namespace {

// The address when `bdf` is its canonical spelling.
std::optional<PciAddress> canonical(std::string_view bdf) {
  auto a = PciAddress::parse(bdf);
  if (!a || a->toString() != bdf) return std::nullopt;
  return a;
}

}  // namespace

bool PciRun::extend(std::string_view bdf) {
  auto a = canonical(bdf);
  if (!a) return false;
  uint32_t rid = a->routingId();
  if (count_ == 0) {
    domain_ = a->domain;
    first_ = rid;
  } else {
    uint32_t last = first_ + (count_ - 1) * stride_;
    if (a->domain != domain_ || rid <= last) return false;
    if (count_ == 1) {
      stride_ = rid - first_;
    } else if (rid - last != stride_) {
      return false;
    }
  }
  ++count_;
  return true;
}

std::string PciRun::at(uint32_t i) const {
  return PciAddress::fromRoutingId(domain_, first_ + i * stride_).toString();
}

std::optional<uint32_t> PciRun::indexOf(std::string_view bdf) const {
  auto a = canonical(bdf);
  if (!a || count_ == 0 || a->domain != domain_) return std::nullopt;
  uint32_t rid = a->routingId();
  if (rid < first_) return std::nullopt;
  uint32_t offset = rid - first_;
  if (count_ == 1 || stride_ == 0) return offset == 0 ? std::optional<uint32_t>(0) : std::nullopt;
  if (offset % stride_ != 0 || offset / stride_ >= count_) return std::nullopt;
  return offset / stride_;
}

bool isPciAddress(std::string_view s) { return PciAddress::parse(s).has_value(); }

bool isUserspaceDriver(std::string_view driver) {
  return driver == "vfio-pci" || driver == "igb_uio" || driver == "uio_pci_generic";
}

}  // namespace sriovdra::host
