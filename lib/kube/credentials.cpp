#include "kube/credentials.h"

#include <algorithm>
#include <mutex>

#include <sys/stat.h>

#include "base/base64.h"
#include "base/files.h"
#include "base/json.h"
#include "base/log.h"
#include "base/process.h"
#include "base/time.h"

namespace sriovdra::kube {
namespace {

std::string trimToken(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

class StaticToken final : public CredentialProvider {
 public:
  explicit StaticToken(std::string token) : token_(std::move(token)) {}
  Result<Credentials> get() override { return Credentials{token_, "", ""}; }
  bool refreshAfterUnauthorized() override { return false; }

 private:
  const std::string token_;
};

// Re-reads the file when its inode, size or mtime changes, and at least once a minute.
class TokenFile final : public CredentialProvider {
 public:
  TokenFile(std::string path, std::string fallback, Clock& clock)
      : path_(std::move(path)), fallback_(std::move(fallback)), clock_(clock) {}

  Result<Credentials> get() override {
    std::lock_guard lock(mu_);
    struct stat st {};
    bool stat_ok = ::stat(path_.c_str(), &st) == 0;
    auto now = clock_.now();
    bool changed = !stat_ok || st.st_ino != ino_ || st.st_size != size_ ||
                   st.st_mtim.tv_sec != mtime_.tv_sec || st.st_mtim.tv_nsec != mtime_.tv_nsec;
    if (!loaded_ || changed || now - read_at_ > std::chrono::minutes(1)) {
      auto content = readFile(path_, 1 << 20);
      if (content.ok()) {
        token_ = trimToken(std::move(*content));
        loaded_ = true;
        read_at_ = now;
        if (stat_ok) {
          ino_ = st.st_ino;
          size_ = st.st_size;
          mtime_ = st.st_mtim;
        }
      } else if (!loaded_) {
        if (!fallback_.empty()) return Credentials{fallback_, "", ""};
        return Status(Code::kUnauthorized,
                      "cannot read the bearer token file: " + content.status().message());
      } else {
        SDRA_LOG_WARN << "keeping the previous bearer token: " << content.status().message();
      }
    }
    return Credentials{token_, "", ""};
  }

  bool refreshAfterUnauthorized() override {
    std::lock_guard lock(mu_);
    std::string before = token_;
    loaded_ = false;
    auto content = readFile(path_, 1 << 20);
    if (!content.ok()) return false;
    token_ = trimToken(std::move(*content));
    loaded_ = true;
    read_at_ = clock_.now();
    return token_ != before;
  }

 private:
  const std::string path_;
  const std::string fallback_;
  Clock& clock_;
  std::mutex mu_;
  bool loaded_ = false;
  std::string token_;
  Clock::Steady::time_point read_at_{};
  ino_t ino_ = 0;
  off_t size_ = -1;
  timespec mtime_{};
};

class ExecPlugin final : public CredentialProvider {
 public:
  ExecPlugin(ExecConfig exec, std::string server, std::string ca, std::string tls_server_name,
             bool insecure, Clock& clock)
      : exec_(std::move(exec)),
        server_(std::move(server)),
        ca_(std::move(ca)),
        tls_server_name_(std::move(tls_server_name)),
        insecure_(insecure),
        clock_(clock) {}

  Result<Credentials> get() override {
    std::lock_guard lock(mu_);
    if (cached_ && (!expiry_ || clock_.wallNow() < *expiry_)) return *cached_;
    auto fresh = run();
    if (!fresh.ok()) return fresh;
    cached_ = *fresh;
    return fresh;
  }

  bool refreshAfterUnauthorized() override {
    std::lock_guard lock(mu_);
    cached_.reset();
    return true;
  }

 private:
  std::string execInfo() const {
    json::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    json::setString(doc, "apiVersion", exec_.api_version, a);
    json::setString(doc, "kind", "ExecCredential", a);
    json::Value spec(rapidjson::kObjectType);
    spec.AddMember("interactive", false, a);
    if (exec_.provide_cluster_info) {
      json::Value cluster(rapidjson::kObjectType);
      json::setString(cluster, "server", server_, a);
      if (!tls_server_name_.empty())
        json::setString(cluster, "tls-server-name", tls_server_name_, a);
      if (insecure_) cluster.AddMember("insecure-skip-tls-verify", true, a);
      if (!ca_.empty()) {
        json::setString(cluster, "certificate-authority-data", base64Encode(ca_), a);
      }
      spec.AddMember("cluster", cluster, a);
    }
    doc.AddMember("spec", spec, a);
    return json::dump(doc);
  }

  Result<Credentials> run() {
    if (exec_.interactive_mode == "Always") {
      return Status(Code::kUnauthorized,
                    "exec plugin " + exec_.command +
                        " requires an interactive terminal (interactiveMode: Always), which "
                        "controllers do not have");
    }
    ProcessSpec spec;
    spec.argv.push_back(exec_.command);
    spec.argv.insert(spec.argv.end(), exec_.args.begin(), exec_.args.end());
    spec.env = exec_.env;
    spec.env.emplace_back("KUBERNETES_EXEC_INFO", execInfo());
    auto out = runProcess(spec, std::chrono::seconds(60));
    std::string hint = exec_.install_hint.empty() ? "" : " (" + exec_.install_hint + ")";
    if (!out.ok()) {
      return Status(Code::kUnauthorized,
                    "exec plugin " + exec_.command + ": " + out.status().message() + hint);
    }
    if (out->exit_code != 0) {
      std::string err = out->err.substr(0, 512);
      return Status(Code::kUnauthorized, "exec plugin " + exec_.command + " exited with code " +
                                             std::to_string(out->exit_code) + ": " + err);
    }
    auto doc = json::parse(out->out);
    if (!doc.ok() || !doc->IsObject()) {
      return Status(Code::kUnauthorized,
                    "exec plugin " + exec_.command + " did not print an ExecCredential");
    }
    if (json::stringOr(*doc, "apiVersion") != exec_.api_version ||
        json::stringOr(*doc, "kind") != "ExecCredential") {
      return Status(Code::kUnauthorized, "exec plugin " + exec_.command + " printed apiVersion \"" +
                                             std::string(json::stringOr(*doc, "apiVersion")) +
                                             "\", expected \"" + exec_.api_version + "\"");
    }
    const json::Value* status = json::objectMember(*doc, "status");
    if (status == nullptr) {
      return Status(Code::kUnauthorized,
                    "exec plugin " + exec_.command + " printed an ExecCredential without status");
    }
    Credentials creds;
    creds.token = std::string(json::stringOr(*status, "token"));
    creds.client_cert_pem = std::string(json::stringOr(*status, "clientCertificateData"));
    creds.client_key_pem = std::string(json::stringOr(*status, "clientKeyData"));
    if (std::any_of(creds.token.begin(), creds.token.end(),
                    [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      // Never cached: it could go into no request (kube/http_request.h).
      return Status(Code::kUnauthorized,
                    "exec plugin " + exec_.command + " returned a token with control characters");
    }
    if (creds.token.empty() && creds.client_cert_pem.empty()) {
      return Status(Code::kUnauthorized, "exec plugin " + exec_.command +
                                             " returned neither a token nor a client certificate");
    }
    if (creds.client_cert_pem.empty() != creds.client_key_pem.empty()) {
      return Status(Code::kUnauthorized, "exec plugin " + exec_.command +
                                             " returned a client certificate without its key");
    }
    expiry_.reset();
    std::string_view exp = json::stringOr(*status, "expirationTimestamp");
    if (!exp.empty()) {
      auto t = parseRfc3339(exp);
      if (!t.ok()) {
        return Status(
            Code::kUnauthorized,
            "exec plugin " + exec_.command + ": bad expirationTimestamp: " + t.status().message());
      }
      expiry_ = *t;
    }
    return creds;
  }

  const ExecConfig exec_;
  const std::string server_;
  const std::string ca_;
  const std::string tls_server_name_;
  const bool insecure_;
  Clock& clock_;
  std::mutex mu_;
  std::optional<Credentials> cached_;
  std::optional<WallTime> expiry_;
};

}  // namespace

std::unique_ptr<CredentialProvider> makeCredentialProvider(const RestConfig& config, Clock& clock) {
  if (config.exec) {
    return std::make_unique<ExecPlugin>(*config.exec, config.server, config.ca_data_for_exec,
                                        config.tls.server_name, config.tls.insecure_skip_verify,
                                        clock);
  }
  if (!config.bearer_token_file.empty()) {
    return std::make_unique<TokenFile>(config.bearer_token_file, config.bearer_token, clock);
  }
  if (!config.bearer_token.empty()) return std::make_unique<StaticToken>(config.bearer_token);
  return nullptr;
}

}  // namespace sriovdra::kube
