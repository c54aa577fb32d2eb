#include "operator/operator_process.h"
#include "policy/render.h"

namespace sriovdra::process {

void addOperatorFlags(CLI::App& app, OperatorProcessOptions& o) {
  app.add_option("--kubeconfig", o.kubeconfig.path,
                 "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  app.add_option("--context", o.kubeconfig.context, "kubeconfig context");
  app.add_option("--namespace", o.operator_.namespace_,
                 "the only namespace whose policies count (default: the pod's namespace)");
  app.add_flag("--leader-elect", o.leader_elect, "run controllers only on the elected leader");
  app.add_option("--leader-election-id", o.lease_name, "name of the Lease")->capture_default_str();
  app.add_option("--leader-election-namespace", o.lease_namespace,
                 "namespace of the Lease (default: --namespace)");
  serving::addMetricsFlags(app, o.metrics);
  app.add_option("--health-probe-bind-address", o.probe_address, "address for /healthz and /readyz")
      ->capture_default_str();
  app.add_option("--webhook-port", o.webhook_port, "admission webhook HTTPS port, 0 disables")
      ->capture_default_str();
  app.add_option("--webhook-cert-dir", o.webhook_cert_dir, "directory with tls.crt and tls.key")
      ->capture_default_str();
  app.add_option("--resource-prefix", o.operator_.resource_prefix,
                 "publish k8s.cni.cncf.io/resourceName=<prefix>/<resourceName> on VFs and NADs "
                 "(Multus matches the two) and set extendedResourceName on per-resource "
                 "DeviceClasses, as the SR-IOV network operator's RESOURCE_PREFIX; \"\" does "
                 "neither")
      ->capture_default_str()
      ->check(policy::resourcePrefixError);
  app.add_flag(
      "--advertise-node-policy-vfs", o.operator_.advertise_node_policy_vfs,
      "advertise every VF of a SriovNetworkNodePolicy's VF group, also without a "
      "SriovResourcePolicy (default: only VFs a SriovResourcePolicy selects, as the SR-IOV "
      "DRA driver)");
  app.add_option("--agent-daemonset", o.agent_daemonset_file,
                 "YAML file with the node agent's DaemonSet: the operator applies it in its "
                 "namespace and keeps it so (OLM installs; default: the agent is deployed by "
                 "install.yaml)");
  app.add_option("--agent-image", o.operator_.agent_image,
                 "image of the agent in --agent-daemonset (default: as in the file)");
  app.add_option("--agent-install-cni-plugins", o.operator_.agent_install_cni_plugins,
                 "keep the init container of --agent-daemonset that installs the sriov and "
                 "ib-sriov CNI plugins on each node (false: the nodes have them already)")
      ->envname("AGENT_INSTALL_CNI_PLUGINS")
      ->capture_default_str();
  app.add_option("--agent-cni-bin-dir", o.operator_.agent_cni_bin_dir,
                 "the nodes' CNI bin directory for --agent-daemonset (default: as in the file, "
                 "/opt/cni/bin)")
      ->envname("AGENT_CNI_BIN_DIR")
      ->check(CLI::Validator(
          [](const std::string& p) {
            return !p.empty() && p.front() == '/' ? std::string()
                                                  : "\"" + p + "\" is not an absolute path";
          },
          "DIR"));
  app.add_option("--metrics-certificates", o.operator_.metrics_certificates,
                 "keep a CA and the serving certificates of the operator's and agents' metrics "
                 "Services in the Secrets sriov-dra-metrics-ca, sriov-dra-metrics-cert and "
                 "sriov-dra-agent-metrics-cert (false: you provide them, e.g. with cert-manager)")
      ->capture_default_str();
  app.add_option("--upstream-namespace", o.operator_.upstream_namespace,
                 "namespace of the SR-IOV network operator while both run: its objects there are "
                 "left to it, and networks copied here take over its NetworkAttachmentDefinitions "
                 "(docs/migration.md)");
  app.add_option("--agent-node-selector", o.agent_node_selector,
                 "label selector of the nodes that run the agent, e.g. "
                 "\"node-role.kubernetes.io/worker\" (default: every node)");
  app.add_option(
         "--max-unavailable", o.operator_.max_unavailable,
         "nodes in no SriovNetworkPoolConfig that may recreate existing VFs at the same time")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option_function<double>(
         "--drain-timeout",
         [&o](double seconds) {
           o.operator_.drain_timeout =
               std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
         },
         "seconds after which a drain that has not ended is reported (DrainTimedOut Event); it "
         "goes on, never forced (default 600)")
      ->check(CLI::Range(1.0, 7.0 * 24 * 3600));
  app.add_option("--workers", o.operator_.workers, "concurrent node reconciles")
      ->capture_default_str();
  app.add_option("-v,--v", o.operator_.verbosity,
                 "log verbosity (a SriovOperatorConfig's logLevel takes its place)");
}

}  // namespace sriovdra::process
