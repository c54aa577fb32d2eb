// Which VFs are in use beyond the checkpoint: claims allocated from the node's pool and the CDI
// specs on disk (dra/in_use.h). Pure.
#include "dra/in_use.h"

#include <catch2/catch.hpp>

#include "api/names.h"
#include "base/json.h"
#include "dra/cdi.h"

using namespace sriovdra;

namespace {

const std::string kDriver(api::kDriverName);

api::ResourceClaim allocated(const std::string& name, const std::string& pool,
                             const std::string& device, bool reserved = true,
                             const std::string& driver = kDriver) {
  api::ResourceClaim c;
  c.metadata.namespace_ = "ns";
  c.metadata.name = name;
  api::AllocationResult a;
  a.results = {{"gpu", "gpu.nvidia.com", pool, "gpu-0"}, {"vf", driver, pool, device}};
  c.status.allocation = a;
  if (reserved) c.status.reserved_for = {{"", "pods", "pod-" + name, "uid-" + name}};
  return c;
}

}  // namespace

TEST_CASE("device names map back to PCI addresses, and nothing else does", "[dra][unit]") {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {"0000-0e-00-1", "0000:0e:00.1"},
      {"0001-c7-1f-7", "0001:c7:1f.7"},
      {"gpu-0", ""},
      {"0000-0e-00", ""},
      {"0000-0e-00-1-2", ""},
      {"0000-0E-00-1", ""},  // the driver's names are lower case
      {"", ""},
  };
  for (const auto& [device, pci] : rows) {
    INFO(device);
    CHECK(dra::pciAddressOfDevice(device) == pci);
    if (!pci.empty()) CHECK(api::deviceName(pci) == device);
  }
}

TEST_CASE("claims reserved for a pod hold the VFs they allocate from this node's pool",
          "[dra][unit]") {
  std::vector<api::ResourceClaim> claims = {
      allocated("a", "n1", "0000-0e-00-1"),
      allocated("b", "n1", "0000-0e-00-2", /*reserved=*/false),    // deallocated soon
      allocated("c", "n2", "0000-0e-00-3"),                        // another node
      allocated("d", "n1", "0000-0e-00-4", true, "other.vendor"),  // another driver
      allocated("e", "n1", "not-a-vf"),
  };
  claims.emplace_back();  // not allocated at all
  auto vfs = dra::allocatedVfs(claims, kDriver, "n1");
  CHECK(vfs == host::PreparedVfs{{"0000:0e:00.1", {"ns/a (allocated)"}}});
}

TEST_CASE("the VFs our CDI specs name: claim specs, pod specs, and what is not a spec",
          "[dra][unit]") {
  dra::CdiDevice vf{
      "uid-1-0000-0e-00-1",
      {"SRIOVNETWORK_VF_DEVICE_0000_0e_00_1=0000:0e:00.1", "SRIOVNETWORK_NET_ATTACH_DEF_NAME=net"},
      {}};
  auto claim_spec = json::dump(dra::cdiSpec({vf}));
  CHECK(dra::cdiSpecAddresses(claim_spec).value() == std::vector<std::string>{"0000:0e:00.1"});
  auto pod_spec = json::dump(dra::cdiSpec({dra::podCdiDevice(
      "pod-1", {{"0000:0e:00.1", "openshift.io/cx6_vfs"}, {"0000:0e:00.2", ""}})}));
  CHECK(dra::cdiSpecAddresses(pod_spec).value() ==
        std::vector<std::string>{"0000:0e:00.1", "0000:0e:00.2"});
  for (const std::string bad : {"", "{", "[]", R"({"kind":"x"})", R"({"devices":{}})"}) {
    INFO(bad);
    CHECK(dra::cdiSpecAddresses(bad).status().code() == Code::kInvalidArgument);
  }
  CHECK(dra::cdiSpecAddresses(R"({"devices":[{"containerEdits":{"env":["X=1",7]}}]})")
            .value()
            .empty());
}

TEST_CASE("spec file names map back to their UIDs", "[dra][unit]") {
  CHECK(dra::cdiSpecId(dra::cdiSpecFileName("3f2a-11")) == "3f2a-11");
  CHECK(dra::cdiSpecId(dra::cdiSpecFileName("")) == "");
  CHECK(dra::cdiSpecId("other.vendor-vf_3f2a.json") == "");
  CHECK(dra::cdiSpecId(dra::cdiSpecFileName("3f2a") + ".tmp") == "");
}

TEST_CASE("merged evidence adds only VFs nobody holds yet", "[dra][unit]") {
  host::PreparedVfs in_use = {{"0000:0e:00.1", {"ns/a"}}};
  dra::mergeInUse(in_use, {{"0000:0e:00.1", {"CDI spec of uid-a"}},
                           {"0000:0e:00.2", {"CDI spec of uid-b", "CDI spec of uid-b"}}});
  CHECK(in_use ==
        host::PreparedVfs{{"0000:0e:00.1", {"ns/a"}}, {"0000:0e:00.2", {"CDI spec of uid-b"}}});
}
