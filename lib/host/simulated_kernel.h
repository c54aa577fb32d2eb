#pragma once
// A sysfs that answers writes the way Linux does, over a tree in the real layout (fixture or
// copy). SIMULATION: used by the demo and the tests on machines without SR-IOV hardware.
//   sriov_numvfs       N creates N VFs (virtfnN/physfn links, VF directories placed by
//                      sriov_offset/sriov_stride, bus links, IOMMU groups) bound to their default
//                      driver, which creates netdevs (and RDMA devices for mlx5); 0 removes them.
//                      N>0 while VFs exist: EBUSY. N > sriov_totalvfs: ERANGE. No PF driver:
//                      ENOENT. Not a number: EINVAL.
//   driver_override    stored; drivers_probe binds the device to it (or to its default driver).
//   drivers/D/bind     binds (EBUSY if bound, ENODEV if unknown); unbind removes the binding,
//                      and with it the netdev and RDMA device of a network driver.
//   net/IF/mtu         68..65535 (IPoIB: ..4092), else EINVAL.
// Other attributes are read-only (EACCES), as in the kernel. Reads pass through.
// It is also the netlink of that machine (netlink.h), its state kept beside the tree:
//   links()            every entry of sys/class/net: name, address, mtu, flags, type from its
//                      files, the PCI device it sits on (the parent the kernel reports), and its
//                      altNames, the lines of <root>/simulated/netlink/altnames/IF.
//   eswitchMode(PCI)   <root>/simulated/devlink/PCI/eswitch_mode, "legacy" when absent. ENODEV
//                      for no such device and for a PF whose driver registers no devlink
//                      instance (any but mlx5_core and ice: igb answers so on a real kernel,
//                      tests/kernel); EOPNOTSUPP for a VF or an InfiniBand port (no eSwitch).
//   setEswitchMode     the same refusals, EINVAL for a mode other than legacy/switchdev, and
//                      EBUSY while the PF has VFs (sriov_numvfs > 0): the order ice requires
//                      (VFs to 0, mode, VFs back), which every driver accepts. Representor
//                      netdevs of switchdev VFs are not modelled.
//   vfs(PF)            each VF of the PF netdev with its settings, KEY=VALUE lines in
//                      <root>/simulated/netlink/vf-config/<PF address>/<VF> (as drivers start
//                      VFs: zero MAC, no VLAN (802.1Q), no rates, trust off, link state auto,
//                      spoof checking on except with mlx5_core); for an mlx5 InfiniBand PF also
//                      the node and port GUID (0 until set), kept in
//                      <root>/simulated/netlink/vf-guids/<PF address>/<VF>. ENODEV for no such
//                      netdev; an empty list for a netdev without VFs.
//   vfStats(PF)        each VF's counters, KEY=VALUE lines (rx_packets, tx_packets, rx_bytes,
//                      tx_bytes, broadcast, multicast, rx_dropped, tx_dropped) in
//                      <root>/simulated/netlink/vf-stats/<PF address>/<VF>, zero until traffic
//                      is added (addVfTraffic, SIMULATION of packets through the VF); ENODEV as
//                      vfs(). Removing the VFs forgets their counters, as drivers do.
//   setUp(IF)          sets or clears IFF_UP in sys/class/net/IF/flags (operstate follows);
//                      ENODEV for no such netdev.
//   setVf              stores one setting, with the kernel's and the PF driver's refusals: EINVAL
//                      for a VF that does not exist, a multicast MAC, a VLAN over 4095 or a
//                      priority over 7, a minimum rate above the maximum; EPROTONOSUPPORT for a
//                      VLAN protocol other than 802.1Q and 802.1ad; igb as Linux's igb driver
//                      (tests/kernel): EOPNOTSUPP for a link state, EPROTONOSUPPORT for 802.1ad,
//                      EINVAL for a minimum rate, and for a maximum one while the PF is down
//                      or above its speed; an InfiniBand PF (IPoIB) takes a link state
//                      only (EOPNOTSUPP for anything Ethernet). Removing the VFs forgets their
//                      settings.
//   setVfGuids         stores them; EOPNOTSUPP for a PF that is not an mlx5 InfiniBand port
//                      (Ethernet drivers have no VF GUIDs), EINVAL for a VF that does not exist.
//                      As mlx5: a VF's IPoIB netdev shows its port GUID (the last 8 bytes of its
//                      20-byte address) only once its driver binds again, and removing the VFs
//                      forgets their GUIDs.
// It is also the Mellanox firmware of that machine (firmware.h), for PFs of vendor 0x15b3, kept in
// <root>/simulated/firmware/<NIC>/{current,next} as KEY=VALUE lines. Until a NIC is set, both
// are what the tree shows: SRIOV_EN True and NUM_OF_VFS the sriov_totalvfs of function 0 (False
// and 0 when that is 0), LINK_TYPE_P1 (and P2 on a dual-port NIC) the ports' netdev types.
//   query(PCI)         kInternal "Failed to open device" for no such PCI device, "not supported"
//                      for another vendor's (as mstconfig answers).
//   set(PCI, values)   next-boot values: SRIOV_EN True/False, NUM_OF_VFS 0..128 (the most
//                      a policy may ask), LINK_TYPE_P1/P2 ETH or IB (P2 on a dual-port NIC only);
//                      any other name or value is kInternal naming it, and nothing is written.
// It is the Rebooter of that machine too (reboot.h):
//   reboot()           SIMULATION of a host reboot: every PF loses its VFs, and each NIC's
//                      next-boot values become current: its PFs' sriov_totalvfs is NUM_OF_VFS
//                      (0 with SRIOV_EN False), each port's netdev type its LINK_TYPE (IB 32,
//                      ETH 1); ib_core loads with the netns_mode <root>/etc/modprobe.d/*.conf
//                      and <root>/proc/cmdline give (rdma_mode.h netnsModeAtBoot: 0 exclusive,
//                      1 shared), else shared; the boot id (proc/sys/kernel/random/boot_id,
//                      kFirstBootId in a fixture) is a new one. Unlike a real reboot, an agent
//                      calling it goes on running and finds a rebooted host on its next pass.
// And it moves netdevs between network namespaces (SIMULATION, for pods the agent did not start):
//   moveToNetns(IF, NS)      as `ip link set IF netns NS` seen from the host's namespace: the
//                            netdev leaves sys/class/net, its device's net/ directory (both show
//                            one namespace's netdevs) and links(); it is kept in
//                            <root>/simulated/netns/NS/IF. The PF still reports the VF's settings
//                            and GUIDs. ENODEV for no such netdev here.
//   returnFromNetns(NS, IF)  moves it back, under that name; ENODEV when NS has no such netdev,
//                            EEXIST when the name is taken here. Unbinding the device's driver
//                            meanwhile destroys the netdev there too, as Linux does.
// And it is the RDMA subsystem of that machine (rdma.h), SIMULATION of its namespace awareness:
//   netnsMode()            <root>/simulated/rdma/netns_mode, "shared" until set.
//   setRdmaNetnsMode(M)    "shared" or "exclusive" (else EINVAL), as ib_core.netns_mode at boot,
//                          the first call's network namespace the initial one (where devices
//                          start and return to): a set-up of the simulation, without Linux's EBUSY
//                          while other network namespaces exist.
//   moveDevice(DEV, NS)    the device sys/class/infiniband/DEV into the namespace NS holds,
//                          recorded as its nsfs device and inode in <root>/simulated/rdma/netns/DEV
//                          (no record: the initial namespace). As Linux: ENODEV for a device the
//                          caller's namespace (/proc/thread-self/ns/net) does not see (in
//                          exclusive mode, one in another namespace), then EOPNOTSUPP in shared
//                          mode and for a device whose PCI function is not on mlx5_core (rxe and
//                          the like cannot move). Unbinding the
//                          function's driver destroys the device and its record (a new one starts
//                          in the initial namespace). Not modelled: the IPoIB netdev Linux
//                          recreates on a move (it keeps its name here), sysfs seen per namespace,
//                          a namespace's end sending its devices back.
// Held to Linux: tests/kernel runs one scenario (VF counts, EBUSY and ERANGE, the agent's plan,
// vfio-pci and back, MTUs, devlink) on the kernel of a QEMU VM (igb, fixture "igb-qemu") and here,
// and compares result and state step by step. Known deviations, left out of that comparison on
// purpose: VF netdev names (the kernel says ethN and udev renames them; here "<PF name>v<N>"),
// MAC addresses and IOMMU group numbers.
// Every write, devlink and rtnetlink change is journaled to <root>/simulated-kernel.log
// ("path value -> result", "devlink pci/PCI eswitch mode M -> result"), so tests and the demo
// can show what the agent did.
#include <mutex>
#include <string>
#include <utility>

#include "host/firmware.h"
#include "host/netlink.h"
#include "host/rdma.h"
#include "host/reboot.h"
#include "host/sysfs.h"
#include "host/tree.h"

namespace sriovdra::host {

class SimulatedKernel : public Sysfs,
                        public Netlink,
                        public Firmware,
                        public Rebooter,
                        public Rdma {
 public:
  explicit SimulatedKernel(std::string root);
  Result<std::string> read(std::string_view path) const override { return fs_.read(path); }
  Result<std::string> readLink(std::string_view path) const override { return fs_.readLink(path); }
  Result<std::string> resolve(std::string_view path) const override { return fs_.resolve(path); }
  Result<std::vector<std::string>> list(std::string_view dir) const override {
    return fs_.list(dir);
  }
  bool exists(std::string_view path) const override { return fs_.exists(path); }
  Status write(std::string_view path, std::string_view value) override;
  const std::string& root() const override { return fs_.root(); }

  Result<std::vector<LinkInfo>> links() const override;
  Result<std::string> eswitchMode(std::string_view pci_address) const override;
  Status setEswitchMode(std::string_view pci_address, std::string_view mode) override;
  Status setVfGuids(std::string_view pf, int32_t vf, uint64_t node_guid,
                    uint64_t port_guid) override;
  Result<std::vector<VfInfo>> vfs(std::string_view pf) const override;
  Result<std::vector<VfStats>> vfStats(std::string_view pf) const override;
  Status setVf(std::string_view pf, const VfSetting& setting) override;
  Status setUp(std::string_view netdev, bool up) override;
  // Adds `traffic` (its vf names the VF) to the counters of a VF of the PF netdev `pf`: EINVAL
  // for a VF that does not exist, ENODEV as vfStats().
  Status addVfTraffic(std::string_view pf, const VfStats& traffic);

  Result<MlxFirmware> query(std::string_view pci_address) override;
  Status set(std::string_view pci_address, const MlxChanges& values) override;
  Status reboot() override;

  Result<std::string> netnsMode() const override;
  Status setRdmaNetnsMode(std::string_view mode);
  Status moveDevice(std::string_view device, const NetNamespace& target) override;

  Status moveToNetns(std::string_view netdev, std::string_view ns);
  Status returnFromNetns(std::string_view ns, std::string_view netdev);

 private:
  // The NIC (the PCI address without its function) of a Mellanox PF, or mstconfig's refusal.
  Result<std::string> mlxNic(std::string_view pci_address) const;
  MlxFirmware firmwareOf(const std::string& nic) const;
  // The PF directories of the NIC's ports, function 0 first.
  std::vector<std::string> portsOf(const std::string& nic) const;
  // The GUID state of the PF netdev `pf` (and its device directory), or why it has none.
  Result<std::string> guidDir(std::string_view pf, std::string* pf_dir) const;
  VfGuids guidsOf(const std::string& state_dir, int32_t vf) const;
  // The device directory of the netdev `pf`, ENODEV when there is none.
  Result<std::string> vfPfDir(std::string_view pf) const;
  VfInfo vfInfoOf(const std::string& pf_dir, int32_t vf) const;
  void journal(const std::string& line, const Status& result);
  // The PF's eSwitch state file, or why it has no eSwitch.
  Result<std::string> eswitchFile(const std::string& bdf) const;
  Status writeLocked(const std::string& path, std::string_view value);
  Status setNumVfs(const std::string& pf_dir, std::string_view value);
  Status createVf(const std::string& pf_dir, const std::string& pf_bdf, int index);
  Status removeVf(const std::string& pf_dir, int index);
  Status bind(const std::string& driver, const std::string& bdf);
  Status unbind(const std::string& driver, const std::string& bdf);
  // The text of the state file at `path`, trimmed; `otherwise` when it cannot be read.
  std::string stateOr(const std::string& path, const std::string& otherwise) const;
  // At boot: the RDMA namespace mode from the modprobe options ib_core reads.
  Status loadIbCoreOptions();
  // Forgets where the RDMA devices of the device at dev_dir were moved (they are destroyed).
  Status forgetRdmaNamespaces(const std::string& dev_dir);
  // Removes the netdevs of the device at dev_dir that were moved to other namespaces.
  Status destroyMovedNetdevs(const std::string& dev_dir);
  Status probe(const std::string& bdf);
  std::string defaultDriver(const std::string& dev_dir) const;
  Result<std::string> deviceDir(const std::string& bdf) const;
  int nextFree(const std::string& dir, const std::string& prefix) const;

  static constexpr const char* kVfStatsDir = "simulated/netlink/vf-stats/";
  VfStats vfStatsOf(const std::string& pf_dir, int32_t vf) const;
  // The device directory of the PF netdev `pf` and its VF count (0 for a VF's netdev, which lists
  // no VFs); ENODEV for no such netdev. mu_ held.
  Result<std::pair<std::string, int32_t>> vfsOf(std::string_view pf) const;

  RealSysfs fs_;
  Tree tree_;
  mutable std::mutex mu_;
};

}  // namespace sriovdra::host
