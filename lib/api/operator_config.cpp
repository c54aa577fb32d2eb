#include "api/operator_config.h"

namespace sriovdra::api {

Result<SriovOperatorConfig> SriovOperatorConfig::decode(const json::Value& v) {
  Reader root(&v, "");
  SriovOperatorConfig c;
  c.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  auto& s = c.spec;
  s.config_daemon_node_selector = spec.stringMap("configDaemonNodeSelector");
  s.enable_injector = spec.optBool("enableInjector");
  s.enable_operator_webhook = spec.optBool("enableOperatorWebhook");
  s.log_level = spec.optI64("logLevel");
  s.disable_drain = spec.boolean("disableDrain");
  s.enable_ovs_offload = spec.optBool("enableOvsOffload");
  s.configuration_mode = spec.str("configurationMode");
  s.use_cdi = spec.optBool("useCDI");
  s.disable_plugins = spec.strings("disablePlugins");
  if (const json::Value* gates = spec.raw("featureGates"); gates != nullptr && !gates->IsNull()) {
    if (!gates->IsObject()) {
      spec.fail("featureGates", "expected a map of true or false");
    } else {
      for (const auto& kv : gates->GetObject()) {
        std::string name(kv.name.GetString(), kv.name.GetStringLength());
        if (!kv.value.IsBool()) {
          spec.fail("featureGates." + name, "expected true or false");
          continue;
        }
        s.feature_gates.emplace(std::move(name), kv.value.GetBool());
      }
    }
  }
  s.config_daemon_env_vars = spec.stringMap("configDaemonEnvVars");
  c.status.conditions = decodeConditions(root.object("status"), "conditions");
  if (!root.status().isOk()) return root.status();
  return c;
}

Result<SriovNetworkPoolConfig> SriovNetworkPoolConfig::decode(const json::Value& v) {
  Reader root(&v, "");
  SriovNetworkPoolConfig p;
  p.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  auto& s = p.spec;
  if (spec.has("nodeSelector"))
    s.node_selector = LabelSelector::decode(spec.object("nodeSelector"));
  if (const json::Value* m = spec.raw("maxUnavailable"); m != nullptr && !m->IsNull()) {
    if (m->IsInt64()) {
      s.max_unavailable = IntOrString{.int_value = m->GetInt64()};
    } else if (m->IsString()) {
      s.max_unavailable =
          IntOrString{.is_string = true, .string_value = {m->GetString(), m->GetStringLength()}};
    } else {
      spec.fail("maxUnavailable", "expected an integer or a percentage");
    }
  }
  s.rdma_mode = spec.str("rdmaMode");
  s.ovs_hardware_offload_config_name = spec.object("ovsHardwareOffloadConfig").str("name");
  if (!root.status().isOk()) return root.status();
  return p;
}

}  // namespace sriovdra::api
