#include "node/attach/flags.h"

namespace sriovdra::attach {
namespace {

CLI::Validator pluginName() {
  return CLI::Validator(
      [](const std::string& t) {
        return cni::isPluginType(t) ? std::string() : "\"" + t + "\" is not a CNI plugin name";
      },
      "TYPE");
}

}  // namespace

CLI::Validator nriPluginIndex() {
  return CLI::Validator(
      [](const std::string& i) {
        return i.size() == 2 && std::isdigit(static_cast<unsigned char>(i[0])) &&
                       std::isdigit(static_cast<unsigned char>(i[1]))
                   ? std::string()
                   : "\"" + i + "\" is not two digits";
      },
      "NN");
}

void addAttachFlags(CLI::App& app, AttacherOptions& o) {
  app.add_option("--default-interface-prefix", o.interface_prefix,
                 "name of a pod's VF interfaces a VfConfig gives no ifName: <prefix>0, <prefix>1, "
                 "... (standalone)")
      ->envname("DEFAULT_INTERFACE_PREFIX")
      ->check(CLI::Validator([](const std::string& p) { return dra::interfacePrefixProblem(p); },
                             "PREFIX"))
      ->capture_default_str();
  app.add_option("--cni-bin-dir", o.cni_bin_dirs,
                 "where the CNI plugins are (comma-separated, searched in order; standalone)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option_function<double>(
         "--nri-attach-timeout",
         [&o](double seconds) {
           o.attach_budget = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
         },
         "seconds a RunPodSandbox's (or a late CreateContainer's) CNI work may take before it "
         "fails; keep it below the runtime's NRI request timeout (containerd: "
         "plugin_request_timeout, 2 s) (default 1.5)")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option_function<int64_t>(
         "--cni-del-give-up-after",
         [&o](int64_t seconds) { o.del_give_up_after = std::chrono::seconds(seconds); },
         "seconds a CNI DEL that keeps failing (and at least " +
             std::to_string(kDelGiveUpAttempts) +
             " tries; 0: the tries alone) holds the pod's claim and next sandbox before it is "
             "given up with a Warning Event (default 600)")
      ->check(CLI::Range(int64_t{0}, int64_t{86400}));
  app.add_option("--cni-plugins", o.allowed.plugins,
                 "CNI plugin types a NetworkAttachmentDefinition may run, main and meta plugins "
                 "(comma-separated; they run as root on the node)")
      ->delimiter(',')
      ->check(pluginName())
      ->capture_default_str();
  app.add_option("--cni-ipam-plugins", o.allowed.ipam,
                 "IPAM plugin types a NetworkAttachmentDefinition may name (comma-separated)")
      ->delimiter(',')
      ->check(pluginName())
      ->capture_default_str();
  app.add_option("--cni-host-paths", o.allowed.host_paths,
                 "directories below which a NetworkAttachmentDefinition may name host files, "
                 "e.g. a logFile (comma-separated; default none)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](const std::string& p) {
            return cni::isCleanAbsolutePath(p) ? std::string()
                                               : "\"" + p + "\" is not a clean absolute path";
          },
          "DIR"));
}

}  // namespace sriovdra::attach
