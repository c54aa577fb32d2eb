// The admission rules, as the webhook, the operator and `sriov-dra validate` apply them.
#include "policy/validate.h"

#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/resource_limits.h"
#include "policy/device_classes.h"
#include "scheduling/cel.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using namespace sriovdra::testing::fixture;

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

}  // namespace

TEST_CASE("node policy rules name the field and the fix", "[policy][validate][unit]") {
  struct Row {
    std::string name;
    api::SriovNetworkNodePolicy policy;
    std::string expected;  // "" = valid
  };
  auto base = [] { return NodePolicy("p").vendor("15b3").numVfs(4).resource("cx6_vfs"); };
  auto with = [&](auto fn) {
    auto p = base().get();
    fn(p.spec);
    return p;
  };
  std::vector<Row> rows = {
      {"valid", base().get(), ""},
      {"valid with a dash", base().resource("cx6-vfs").get(), ""},
      {"resourceName with a dot", base().resource("cx6.vfs").get(),
       "spec.resourceName \"cx6.vfs\""},
      {"resourceName too long", base().resource(std::string(64, 'a')).get(), "at most 63"},
      {"empty nicSelector", NodePolicy("p").numVfs(4).get(), "spec.nicSelector selects nothing"},
      {"range without #", base().pf("ibp14s0#0-3#4").get(), "more than one '#'"},
      {"range with a list", base().pf("ibp14s0#0,2-3").get(), "one range per entry"},
      {"range backwards", base().pf("ibp14s0#3-1").get(), "ends before it starts"},
      {"range past numVfs", base().pf("ibp14s0#0-4").get(), "numVfs is 4"},
      {"range not numbers", base().pf("ibp14s0#a-b").get(), "two non-negative integers"},
      {"vfio-pci with RDMA", base().deviceType("vfio-pci").rdma(true).get(),
       "'deviceType: vfio-pci' conflicts with 'isRdma: true'"},
      {"bad vendor", base().vendor("0x15b3").get(), "4-digit hex PCI vendor id"},
      {"bad root device", base().rootDevice("0e:00.0").get(), "PCI address like"},
      {"switchdev on IB", with([](auto& s) {
         s.eswitch_mode = "switchdev";
         s.link_type = "ib";
       }),
       "switchdev needs an Ethernet link"},
      // Not supported here: refused at admission rather than accepted and ignored.
      {"netFilter", with([](auto& s) { s.nic_selector.net_filter = "openstack/NetworkID:x"; }),
       "spec.nicSelector.netFilter (OpenStack virtual NICs) is not supported"},
      {"vdpaType", with([](auto& s) {
         s.vdpa_type = "virtio";
         s.eswitch_mode = "switchdev";
       }),
       "spec.vdpaType (vDPA devices) is not supported"},
      {"bridge", with([](auto& s) {
         s.has_bridge = true;
         s.eswitch_mode = "switchdev";
       }),
       "spec.bridge (OVS hardware-offload bridges) is not supported"},
      {"numVfs at the PCIe limit", base().numVfs(65535).get(), ""},
      {"numVfs past the PCIe limit", base().numVfs(65536).get(),
       "spec.numVfs 65536 exceeds 65535, the most a PF can offer"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto f = policy::validateNodePolicy(row.policy);
    if (row.expected.empty()) {
      CHECK(f.errors.empty());
    } else {
      CHECK_THAT(joined(f.errors), Catch::Contains(row.expected));
    }
  }
}

TEST_CASE("overlapping VF ranges between policies on a shared node are rejected",
          "[policy][validate][unit]") {
  auto n = node("n1", {{"sriov", "true"}});
  auto mine = NodePolicy("cx6-a").pf("ibp14s0#0-3").nodeSelector({{"sriov", "true"}}).get();
  auto overlapping = NodePolicy("cx6-b").pf("ibp14s0#2-5").get();
  auto disjoint = NodePolicy("cx6-c").pf("ibp14s0#4-7").get();
  auto elsewhere = NodePolicy("cx6-d").pf("ibp14s0#0-7").nodeSelector({{"sriov", "false"}}).get();
  std::vector<const api::SriovNetworkNodePolicy*> others = {&overlapping, &disjoint, &elsewhere};
  auto f = policy::validateNodePolicyAgainst(mine, others, {&n});
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0] ==
        "policy \"cx6-a\": VF index range in ibp14s0#0-3 is overlapped with existing policy "
        "\"cx6-b\" (ibp14s0#2-5) on node n1; "
        "give them disjoint ranges such as ibp14s0#0-3 and ibp14s0#4-7");

  SECTION("as upstream, two entries without a range on one PF overlap, a ranged one does not") {
    auto whole_a = NodePolicy("a").pf("ibp14s0").get();
    auto whole_b = NodePolicy("b").pf("ibp14s0").get();
    auto ranged = NodePolicy("c").pf("ibp14s0#0-1").get();
    CHECK(policy::validateNodePolicyAgainst(whole_a, {&whole_b}, {&n}).errors.size() == 1);
    CHECK(policy::validateNodePolicyAgainst(whole_a, {&ranged}, {&n}).errors.empty());
  }
}

TEST_CASE("a policy overlapping thousands of others gets ten messages and a count",
          "[policy][validate][unit]") {
  auto n = node("n1", {{"sriov", "true"}});
  auto mine = NodePolicy("mine").pf("ibp14s0#0-3").get();
  std::vector<api::SriovNetworkNodePolicy> many;
  many.reserve(5000);
  for (int i = 0; i < 5000; ++i) {
    many.push_back(NodePolicy("p" + std::to_string(i)).pf("ibp14s0#0-3").get());
  }
  std::vector<const api::SriovNetworkNodePolicy*> others;
  others.reserve(many.size());
  for (const auto& p : many) others.push_back(&p);
  auto f = policy::validateNodePolicyAgainst(mine, others, {&n});
  REQUIRE(f.errors.size() == policy::kMaxConflictsListed + 1);
  CHECK_THAT(f.errors[0], Catch::Contains("is overlapped with existing policy \"p0\""));
  CHECK(f.errors.back() ==
        "policy \"mine\": 4990 more conflicts with other policies (5000 in all; the first 10 "
        "are listed)");
}

TEST_CASE("overlapping ranges are refused before any node carries the labels",
          "[policy][validate][unit]") {
  auto a = NodePolicy("a").pf("ibp14s0#0-3").nodeSelector({{"pool", "x"}}).get();
  auto same = NodePolicy("b").pf("ibp14s0#2-5").nodeSelector({{"pool", "x"}}).get();
  auto every = NodePolicy("c").pf("ibp14s0#2-5").get();  // no nodeSelector: every node
  auto other = NodePolicy("d").pf("ibp14s0#2-5").nodeSelector({{"pool", "y"}}).get();
  auto errors = [&](const api::SriovNetworkNodePolicy& o) {
    return joined(policy::validateNodePolicyAgainst(a, {&o}, {}).errors);
  };
  CHECK_THAT(errors(same),
             Catch::Contains("is overlapped with existing policy \"b\" (ibp14s0#2-5) on every node "
                             "they select (their nodeSelectors are identical)"));
  CHECK_THAT(errors(every),
             Catch::Contains("is overlapped with existing policy \"c\" (ibp14s0#2-5) on every node "
                             "they both select (an empty nodeSelector selects "
                             "every node)"));
  CHECK(errors(other).empty());  // different labels: no node selects both yet
}

TEST_CASE(
    "numVfs is checked against the totalvfs nodes report (Mellanox: what its firmware can "
    "give), in upstream's words",
    "[policy][validate][unit]") {
  auto n1 = node("n1", {{"sriov", "true"}});
  auto n2 = node("n2", {{"sriov", "false"}});
  api::SriovNodeState s1, s2;
  s1.metadata.name = "n1";
  s1.status = a100Status(1);  // 8 VFs at most per PF
  s2.metadata.name = "n2";
  s2.status = a100Status(1);
  auto check = [&](const api::SriovNetworkNodePolicy& p) {
    return policy::validateNodePolicyAgainstStates(p, {&n1, &n2}, api::reportsOf({&s1, &s2}))
        .errors;
  };
  auto policy = [](int vfs) {
    return NodePolicy("cx6").pf("ibp14s0").numVfs(vfs).nodeSelector({{"sriov", "true"}});
  };
  CHECK(check(policy(8).get()).empty());
  // ConnectX: the agent raises the firmware's NUM_OF_VFS (with a reboot), up to upstream's 128.
  CHECK(check(policy(128).get()).empty());
  CHECK(check(policy(129).get()) ==
        std::vector<std::string>{"numVfs(129) in CR cx6 exceed the maximum allowed value(128) "
                                 "interface(ibp14s0) node(n1); lower numVfs or leave this PF out "
                                 "of nicSelector"});
  CHECK(check(policy(129).nodeSelector({{"sriov", "none"}}).get()).empty());  // no node selected
  // Other vendors offer what sriov_totalvfs says.
  for (auto& pf : s1.status.interfaces) pf.vendor = "8086";
  CHECK(check(policy(9).get()) ==
        std::vector<std::string>{"numVfs(9) in CR cx6 exceed the maximum allowed value(8) "
                                 "interface(ibp14s0) node(n1); lower numVfs or leave this PF out "
                                 "of nicSelector"});
  s1.status = a100Status(1);
  // externallyManaged: the VFs must exist already (a100Status(1): one per PF).
  auto external = policy(1).get();
  external.spec.externally_managed = true;
  CHECK(check(external).empty());
  external.spec.num_vfs = 2;
  CHECK(check(external) ==
        std::vector<std::string>{"numVfs(2) in CR cx6 is higher than the virtual functions "
                                 "allocated for the PF externally value(1) interface(ibp14s0) "
                                 "node(n1); create the VFs first or lower numVfs"});
  CHECK(check(NodePolicy("other").pf("nope").numVfs(9).nodeSelector({{"sriov", "true"}}).get())
            .empty());
}

TEST_CASE("an externally managed policy may not ask for a higher MTU or another link type",
          "[policy][validate][unit]") {
  auto n1 = node("n1", {{"sriov", "true"}});
  api::SriovNodeState s1;
  s1.metadata.name = "n1";
  s1.status = a100Status(1);  // IB PFs at MTU 4092
  auto external = [](std::optional<int64_t> mtu, std::string link_type) {
    auto p = NodePolicy("ext").pf("ibp14s0").numVfs(1).nodeSelector({{"sriov", "true"}}).get();
    p.spec.externally_managed = true;
    p.spec.mtu = mtu;
    p.spec.link_type = std::move(link_type);
    return p;
  };
  auto check = [&](const api::SriovNetworkNodePolicy& p) {
    return policy::validateNodePolicyAgainstStates(p, {&n1}, api::reportsOf({&s1})).errors;
  };
  CHECK(check(external(4092, "ib")).empty());  // link types compare without case, as upstream
  CHECK(check(external(std::nullopt, "")).empty());
  CHECK(check(external(9000, "IB")) ==
        std::vector<std::string>{"MTU(9000) in CR ext is higher than the MTU for the PF "
                                 "externally value(4092) interface(ibp14s0) node(n1); raise the "
                                 "PF's MTU on the host first or lower spec.mtu"});
  CHECK(check(external(2048, "eth")) ==
        std::vector<std::string>{"LinkType(eth) in CR ext is not equal to the LinkType for the PF "
                                 "externally value(IB) interface(ibp14s0) node(n1); set "
                                 "spec.linkType to the PF's or remove it"});
  auto managed = external(9000, "eth");
  managed.spec.externally_managed = false;  // the agent sets MTU and checks the link itself
  CHECK(check(managed).empty());
}

TEST_CASE("a PF named by one policy and by its altName in another is one PF",
          "[policy][validate][unit]") {
  auto n1 = node("n1", {{"sriov", "true"}});
  auto n2 = node("n2", {{"sriov", "true"}});
  api::SriovNodeState s1;
  s1.metadata.name = "n1";
  s1.status = a100Status(1);
  s1.status.interfaces[0].alt_names = {"enp14s0np0"};  // ibp14s0, 0000:0e:00.0
  auto by_name = NodePolicy("a").pf("ibp14s0#0-3").nodeSelector({{"sriov", "true"}}).get();
  auto by_alt = NodePolicy("b").pf("enp14s0np0#2-5").nodeSelector({{"sriov", "true"}}).get();
  auto disjoint = NodePolicy("c").pf("enp14s0np0#6-7").nodeSelector({{"sriov", "true"}}).get();
  auto f = policy::validateNodePolicyAgainst(by_alt, {&by_name, &disjoint}, {&n1, &n2},
                                             api::reportsOf({&s1}));
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0] ==
        "policy \"b\": VF index range in enp14s0np0#2-5 is overlapped with existing policy \"a\" "
        "(ibp14s0#0-3) on node n1 "
        "(enp14s0np0 and ibp14s0 are names of one PF, " +
            s1.status.interfaces[0].pci_address +
            "); give them disjoint ranges such as enp14s0np0#0-3 and enp14s0np0#4-7");
  // Without the report the names are two PFs; on a node that does not report the alias too.
  CHECK(policy::validateNodePolicyAgainst(by_alt, {&by_name}, {&n1, &n2}).errors.empty());
  auto n3 = node("n3", {{"pool", "b"}});
  api::SriovNodeState s3 = s1;
  s3.metadata.name = "n3";
  auto on_n3 = NodePolicy("d").pf("ibp14s0#0-3").nodeSelector({{"pool", "b"}}).get();
  auto on_n1 = NodePolicy("e").pf("enp14s0np0#0-3").nodeSelector({{"sriov", "true"}}).get();
  CHECK(policy::validateNodePolicyAgainst(on_n1, {&on_n3}, {&n1, &n3}, api::reportsOf({&s1, &s3}))
            .errors.empty());  // no node has both
}

TEST_CASE(
    "the webhook's one function checks the policy alone, between policies and against "
    "the reports",
    "[policy][validate][unit]") {
  auto n1 = node("n1", {{"sriov", "true"}});
  api::SriovNodeState s1;
  s1.metadata.name = "n1";
  s1.status = a100Status(1);
  auto other = NodePolicy("other").pf("ibp14s0#0-3").nodeSelector({{"sriov", "true"}}).get();
  auto p = NodePolicy("p").pf("ibp14s0#3-129").numVfs(130).nodeSelector({{"sriov", "true"}}).get();
  auto f = policy::validateNodePolicyInCluster(p, {{&other}, {&n1}, api::reportsOf({&s1})});
  std::string all = joined(f.errors);
  CHECK_THAT(all, Catch::Contains("is overlapped with existing policy \"other\""));
  CHECK_THAT(all, Catch::Contains("numVfs(130) in CR p exceed the maximum allowed value(128)"));
  CHECK(f.errors.size() == 2);
  CHECK(policy::validateNodePolicyInCluster(p, {}).ok());  // alone it is valid
}

TEST_CASE("resource policy and DeviceAttributes rules", "[policy][validate][unit]") {
  SECTION("selectors") {
    api::SriovResourcePolicy p = ResourcePolicy("p").config({}).get();
    p.node_selector = api::NodeSelector{{{{{"cpus", "Gt", {"many"}}}, {}}, {{}, {}}}};
    p.configs[0].device_attributes_selector = api::LabelSelector{{}, {{"pool", "In", {}}}};
    p.configs[0].resource_filters = {{.link_type = "roce"},
                                     {.drivers = {"vfio-pci", "default", "../../../dev/sda"}},
                                     {.drivers = std::vector<std::string>(17, "vfio-pci")}};
    auto f = policy::validateResourcePolicy(p);
    std::string all = joined(f.errors);
    CHECK_THAT(all, Catch::Contains("operator Gt needs exactly one integer value"));
    CHECK_THAT(joined(f.warnings),
               Catch::Contains("nodeSelectorTerms[1] has no requirements: it selects every node, "
                               "as in the SR-IOV DRA driver"));
    CHECK_THAT(all, !Catch::Contains("nodeSelectorTerms[1]"));
    p.node_selector = api::NodeSelector{};
    auto none = policy::validateResourcePolicy(p);
    CHECK_THAT(joined(none.warnings), Catch::Contains("nodeSelectorTerms is empty: it selects "
                                                      "every node, as in the SR-IOV DRA driver"));
    CHECK_THAT(all, Catch::Contains("operator In needs at least one value"));
    CHECK_THAT(all, Catch::Contains("linkType \"roce\" must be eth, ethernet, ib or infiniband"));
    CHECK_THAT(all, Catch::Contains("resourceFilters[1].drivers entry \"../../../dev/sda\" must be "
                                    "\"default\" or a kernel driver's name"));
    CHECK_THAT(all,
               !Catch::Contains("entry \"vfio-pci\"") && !Catch::Contains("entry \"default\""));
    CHECK_THAT(all, Catch::Contains("resourceFilters[2].drivers has 17 entries; list at most 16"));
  }
  SECTION("attribute names and values follow the DRA rules") {
    auto d = deviceAttributes(
        "d", {},
        {{"example.com/ok", api::AttributeValue::ofString("fine")},
         {"example.com/long", api::AttributeValue::ofString(std::string(65, 'x'))},
         {"example.com/fw", api::AttributeValue::ofVersion("v1.2")},
         {"Bad_Domain.com/x", api::AttributeValue::ofBool(true)},
         {"example.com/a/b", api::AttributeValue::ofBool(true)},
         {"resource.kubernetes.io/pcieRoot", api::AttributeValue::ofString("pci0000:00")},
         {"resource.kubernetes.io/mine", api::AttributeValue::ofString("x")},
         {"example.com/this_name_is_far_too_long_for_dra_rules", api::AttributeValue::ofInt(1)}});
    auto f = policy::validateDeviceAttributes(d);
    std::string all = joined(f.errors);
    CHECK_THAT(all, !Catch::Contains("example.com/ok"));
    CHECK_THAT(all, Catch::Contains("longer than 64 characters"));
    CHECK_THAT(all, Catch::Contains("\"v1.2\" is not a semantic version"));
    CHECK_THAT(all,
               Catch::Contains("the domain \"Bad_Domain.com\" must be a lower-case DNS subdomain"));
    CHECK_THAT(all, Catch::Contains("has more than one '/'"));
    CHECK_THAT(all, !Catch::Contains("pcieRoot"));  // skipped when applied, as the driver does
    CHECK_THAT(joined(f.warnings),
               Catch::Contains("\"resource.kubernetes.io/pcieRoot\" is a built-in discovery "
                               "attribute: it is not applied (as in the SR-IOV DRA driver)"));
    CHECK_THAT(all, Catch::Contains("kubernetes.io domain is reserved"));
    CHECK_THAT(all, Catch::Contains("at most 32 characters"));
  }
  SECTION("semantic versions") {
    for (const char* good : {"1.2.3", "0.0.0", "1.0.0-rc.1", "1.0.0+build.5", "22.31.1014"}) {
      CHECK(api::isSemver(good));
    }
    for (const char* bad : {"v1.2.3", "1.2", "01.2.3", "1.2.3-", ""})
      CHECK_FALSE(api::isSemver(bad));
  }
}

TEST_CASE("webhook defaults: priority 99, isRdma for InfiniBand", "[policy][validate][unit]") {
  auto plain = NodePolicy("p").vendor("8086").get();
  plain.spec.priority.reset();
  auto d = policy::nodePolicyDefaults(plain.spec);
  CHECK(d.set_priority);
  CHECK(d.set_is_rdma == false);
  auto ib = NodePolicy("p").vendor("15b3").linkType("IB").priority(5).rdma(false).get();
  auto d2 = policy::nodePolicyDefaults(ib.spec);
  CHECK_FALSE(d2.set_priority);
  CHECK(d2.set_is_rdma == true);
  auto vfio = NodePolicy("p").vendor("15b3").linkType("ib").deviceType("vfio-pci").get();
  CHECK(policy::nodePolicyDefaults(vfio.spec).set_is_rdma == false);
}

TEST_CASE("device classes: one for the driver, one per resource name",
          "[policy][deviceclass][unit]") {
  auto a = NodePolicy("a").resource("cx6_vfs").get();
  auto b = NodePolicy("b").resource("E810").get();
  auto da = deviceAttributes("d", {},
                             {{"sriovnetwork.k8snetworkplumbingwg.io/resourceName",
                               api::AttributeValue::ofString("cx6_vfs")}});
  auto classes = policy::renderDeviceClasses({&a, &b}, {&da}, "");
  REQUIRE(classes.size() == 3);
  CHECK(classes[0].name == "cx6-vfs.sriovnetwork.k8snetworkplumbingwg.io");
  CHECK_FALSE(classes[0].spec.extended_resource_name.has_value());
  CHECK(classes[1].name == "e810.sriovnetwork.k8snetworkplumbingwg.io");
  CHECK(classes[2].name == "sriovnetwork.k8snetworkplumbingwg.io");
  // What each class selects, by evaluating its selectors (they are CEL) on devices.
  const std::string driver(api::kDriverName);
  auto vf = [](const std::string& resource) {
    api::SliceDevice d{"0000-0e-00-1", {}, {}};
    if (!resource.empty()) {
      d.attributes[std::string(api::attr::kResourceName)] = api::AttributeValue::ofString(resource);
    }
    return d;
  };
  auto selects = [&](const api::DeviceClassSpec& spec, const std::string& device_driver,
                     const api::SliceDevice& device) {
    for (const auto& expression : spec.cel_selectors) {
      auto program = scheduling::cel::Program::compile(expression);
      REQUIRE(program.ok());
      auto matched = program->matches({device_driver, device});
      REQUIRE(matched.ok());
      if (!*matched) return false;
    }
    return true;
  };
  CHECK(selects(classes[0].spec, driver, vf("cx6_vfs")));
  CHECK_FALSE(selects(classes[0].spec, driver, vf("E810")));
  CHECK_FALSE(selects(classes[0].spec, driver, vf("")));  // no resourceName: not an error
  CHECK_FALSE(selects(classes[0].spec, "gpu.nvidia.com", vf("cx6_vfs")));
  CHECK(selects(classes[1].spec, driver, vf("E810")));
  CHECK(selects(classes[2].spec, driver, vf("")));
  CHECK_FALSE(selects(classes[2].spec, "gpu.nvidia.com", vf("")));

  auto prefixed = policy::renderDeviceClasses({&a}, {}, "openshift.io");
  CHECK(prefixed[0].spec.extended_resource_name == "openshift.io/cx6_vfs");
}
