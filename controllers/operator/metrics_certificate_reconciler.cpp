#include "operator/metrics_certificate_reconciler.h"

#include <algorithm>

#include "base/base64.h"
#include "base/json.h"
#include "base/log.h"

namespace sriovdra::op {

std::vector<std::string> metricsCertificateNames(const std::string& service,
                                                 const std::string& ns) {
  std::string name = service + "." + ns + ".svc";
  return {name, name + ".cluster.local"};
}

MetricsCertificatePlan planMetricsCertificates(const std::optional<http::Pem>& ca,
                                               const std::optional<StoredServingCert>& cert,
                                               const std::vector<std::string>& names,
                                               const std::string& secret,
                                               std::chrono::system_clock::time_point now) {
  MetricsCertificatePlan plan;
  plan.renew_at = now + kCertValidity - kRenewBefore;
  auto ca_info = ca ? http::inspectCert(*ca, ca->cert)
                    : Result<http::CertInfo>(Status(Code::kNotFound, "no CA"));
  if (!ca_info.ok()) {
    plan.new_ca = plan.new_cert = true;
    plan.why = "the CA Secret " + std::string(kMetricsCaSecret) +
               (ca ? ": " + ca_info.status().message() : std::string(" is missing"));
    return plan;
  }
  if (ca_info->not_after - kRenewBefore <= now) {
    plan.new_ca = plan.new_cert = true;
    plan.why = "the CA ends within 30 days";
    return plan;
  }
  auto cert_info = cert ? http::inspectCert(cert->pair, ca->cert)
                        : Result<http::CertInfo>(Status(Code::kNotFound, "no certificate"));
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  plan.new_cert = true;
  if (!cert) {
    plan.why = "the Secret " + secret + " is missing";
  } else if (!cert_info.ok()) {
    plan.why = secret + ": " + cert_info.status().message();
  } else if (cert->ca_cert != ca->cert) {
    plan.why = secret + ": ca.crt is not the CA's certificate";
  } else if (sorted(cert_info->dns_names) != sorted(names)) {
    plan.why = secret + ": the certificate names another Service";
  } else if (cert_info->not_after - kRenewBefore <= now) {
    plan.why = secret + ": the certificate ends within 30 days";
  } else {
    plan.new_cert = false;
    plan.renew_at = std::min(cert_info->not_after, ca_info->not_after) - kRenewBefore;
  }
  return plan;
}

Result<std::optional<std::vector<std::string>>> MetricsCertificateReconciler::readSecret(
    const char* name, const std::vector<const char*>& keys) {
  auto secret = client_.get(kube::resources::kSecrets, options_.namespace_, name);
  if (!secret.ok()) {
    if (secret.status().code() == Code::kNotFound) return std::optional<std::vector<std::string>>();
    return Status(secret.status()).prepend("reading the Secret " + std::string(name));
  }
  std::vector<std::string> out;
  const json::Value* data = json::objectMember(*secret, "data");
  for (const char* key : keys) {
    const json::Value* v = data != nullptr ? json::member(*data, key) : nullptr;
    auto decoded = v != nullptr && v->IsString()
                       ? base64Decode(v->GetString())
                       : Result<std::string>(Status(Code::kNotFound, key));
    if (!decoded.ok()) return std::optional<std::vector<std::string>>();
    out.push_back(std::move(*decoded));
  }
  return std::optional(std::move(out));
}

Status MetricsCertificateReconciler::writeSecret(
    const char* name, const std::vector<std::pair<const char*, std::string>>& data) {
  json::Document doc = kube::newObject(kube::resources::kSecrets, options_.namespace_, name);
  auto& a = doc.GetAllocator();
  json::Value labels(rapidjson::kObjectType);
  labels.AddMember("app.kubernetes.io/part-of", "sriov-dra", a);
  doc["metadata"].AddMember("labels", labels, a);
  doc.AddMember("type", "kubernetes.io/tls", a);
  json::Value encoded(rapidjson::kObjectType);
  for (const auto& [key, value] : data) {
    encoded.AddMember(json::str(key, a), json::str(base64Encode(value), a), a);
  }
  doc.AddMember("data", encoded, a);
  auto applied = client_.apply(kube::resources::kSecrets, options_.namespace_, doc,
                               {.field_manager = kFieldManager, .force = true});
  if (!applied.ok())
    return Status(applied.status()).prepend("writing the Secret " + std::string(name));
  return Status::ok();
}

Result<kube::ReconcileResult> MetricsCertificateReconciler::reconcile(const std::string&) {
  auto ca_data = readSecret(kMetricsCaSecret, {"tls.crt", "tls.key"});
  if (!ca_data.ok()) return ca_data.status();
  std::optional<http::Pem> ca;
  if (*ca_data) ca = http::Pem{(**ca_data)[0], (**ca_data)[1]};
  auto now = std::chrono::system_clock::now();
  auto renew_at = now + kRecheck;
  bool new_ca_written = false;
  for (auto [secret, service] : {std::pair{kMetricsCertSecret, kOperatorMetricsService},
                                 std::pair{kAgentMetricsCertSecret, kAgentMetricsService}}) {
    auto cert_data = readSecret(secret, {"tls.crt", "tls.key", "ca.crt"});
    if (!cert_data.ok()) return cert_data.status();
    std::optional<StoredServingCert> cert;
    if (*cert_data) {
      cert = StoredServingCert{{(**cert_data)[0], (**cert_data)[1]}, (**cert_data)[2]};
    }
    auto names = metricsCertificateNames(service, options_.namespace_);
    auto plan = planMetricsCertificates(ca, cert, names, secret, now);
    if (plan.new_ca && !new_ca_written) {
      ca = http::makeCa("sriov-dra-metrics-ca", kCaValidity);
      SDRA_RETURN_IF_ERROR(
          writeSecret(kMetricsCaSecret, {{"tls.crt", ca->cert}, {"tls.key", ca->key}}));
      new_ca_written = true;
    }
    if (plan.new_cert) {
      auto made = http::makeCert(*ca, {.common_name = names.front(),
                                       .dns_names = names,
                                       .client = false,
                                       .validity = kCertValidity});
      SDRA_RETURN_IF_ERROR(writeSecret(
          secret, {{"tls.crt", made.cert}, {"tls.key", made.key}, {"ca.crt", ca->cert}}));
      SDRA_LOG_INFO << "metrics: issued the serving certificate for " << names.front()
                    << (plan.new_ca ? " with a new CA" : "") << " (" << plan.why << ")";
      plan.renew_at = now + kCertValidity - kRenewBefore;
    }
    renew_at = std::min(renew_at, plan.renew_at);
  }
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(renew_at - now);
  return kube::ReconcileResult::after(std::max(wait, std::chrono::milliseconds(1000)));
}

}  // namespace sriovdra::op
