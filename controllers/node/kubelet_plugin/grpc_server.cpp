#include "node/kubelet_plugin/grpc_server.h"

#include <filesystem>

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include "base/log.h"
#include "dra/v1/api.grpc.pb.h"
#include "dra/v1beta1/api.grpc.pb.h"
#include "pluginregistration/api.grpc.pb.h"

namespace sriovdra::kubelet_plugin {
namespace {

namespace reg = ::pluginregistration;
namespace v1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
namespace v1beta1 = ::k8s::io::kubelet::pkg::apis::dra::v1beta1;

class RegistrationService final : public reg::Registration::Service {
 public:
  RegistrationService(GrpcServer& owner, std::string driver, std::string endpoint)
      : owner_(owner), driver_(std::move(driver)), endpoint_(std::move(endpoint)) {}

  grpc::Status GetInfo(grpc::ServerContext*, const reg::InfoRequest*,
                       reg::PluginInfo* info) override {
    info->set_type("DRAPlugin");
    info->set_name(driver_);
    info->set_endpoint(endpoint_);
    info->add_supported_versions("v1.DRAPlugin");
    info->add_supported_versions("v1beta1.DRAPlugin");
    return grpc::Status::OK;
  }

  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*, const reg::RegistrationStatus* status,
                                        reg::RegistrationStatusResponse*) override {
    owner_.setRegistration(status->plugin_registered(), status->error());
    return grpc::Status::OK;
  }

 private:
  GrpcServer& owner_;
  std::string driver_;
  std::string endpoint_;
};

// The v1 and v1beta1 services have identical messages in different packages.
template <typename Ns>
class DraService final : public Ns::DRAPlugin::Service {
 public:
  explicit DraService(Helper& helper) : helper_(helper) {}

  grpc::Status NodePrepareResources(grpc::ServerContext*,
                                    const typename Ns::NodePrepareResourcesRequest* req,
                                    typename Ns::NodePrepareResourcesResponse* resp) override {
    auto results = helper_.prepare(claims(*req));
    for (auto& [uid, result] : results) {
      auto& out = (*resp->mutable_claims())[uid];
      out.set_error(result.error);
      for (const auto& d : result.devices) {
        auto* dev = out.add_devices();
        for (const auto& r : d.request_names) dev->add_request_names(r);
        dev->set_pool_name(d.pool);
        dev->set_device_name(d.device);
        for (const auto& id : d.cdi_device_ids) dev->add_cdi_device_ids(id);
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status NodeUnprepareResources(grpc::ServerContext*,
                                      const typename Ns::NodeUnprepareResourcesRequest* req,
                                      typename Ns::NodeUnprepareResourcesResponse* resp) override {
    for (auto& [uid, error] : helper_.unprepare(claims(*req))) {
      (*resp->mutable_claims())[uid].set_error(error);
    }
    return grpc::Status::OK;
  }

 private:
  template <typename Req>
  static std::vector<ClaimRef> claims(const Req& req) {
    std::vector<ClaimRef> out;
    for (const auto& c : req.claims()) out.push_back({c.namespace_(), c.uid(), c.name()});
    return out;
  }

  Helper& helper_;
};

struct V1 {
  using DRAPlugin = v1::DRAPlugin;
  using NodePrepareResourcesRequest = v1::NodePrepareResourcesRequest;
  using NodePrepareResourcesResponse = v1::NodePrepareResourcesResponse;
  using NodeUnprepareResourcesRequest = v1::NodeUnprepareResourcesRequest;
  using NodeUnprepareResourcesResponse = v1::NodeUnprepareResourcesResponse;
};
struct V1beta1 {
  using DRAPlugin = v1beta1::DRAPlugin;
  using NodePrepareResourcesRequest = v1beta1::NodePrepareResourcesRequest;
  using NodePrepareResourcesResponse = v1beta1::NodePrepareResourcesResponse;
  using NodeUnprepareResourcesRequest = v1beta1::NodeUnprepareResourcesRequest;
  using NodeUnprepareResourcesResponse = v1beta1::NodeUnprepareResourcesResponse;
};

// Removes what a crashed predecessor left at `path` (only a socket), creating its directory.
Status prepareSocketPath(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return Status(Code::kIo, "creating the directory of " + path + ": " + ec.message());
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Status(Code::kAlreadyExists, path + " exists and is not a socket; not replacing it");
    }
    std::filesystem::remove(path, ec);
    if (ec) return Status(Code::kIo, "removing the stale socket " + path + ": " + ec.message());
    SDRA_LOG_INFO << "replaced the stale socket " << path;
  }
  return Status::ok();
}

Result<std::unique_ptr<grpc::Server>> listen(const std::string& path,
                                             std::initializer_list<grpc::Service*> services) {
  SDRA_RETURN_IF_ERROR(prepareSocketPath(path));
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix://" + path, grpc::InsecureServerCredentials());
  for (auto* s : services) builder.RegisterService(s);
  auto server = builder.BuildAndStart();
  if (!server) return Status(Code::kIo, "cannot serve gRPC on " + path);
  return server;
}

}  // namespace

Result<std::unique_ptr<GrpcServer>> GrpcServer::start(Helper& helper,
                                                      const GrpcServerOptions& options) {
  std::unique_ptr<GrpcServer> s(new GrpcServer());
  s->dra_socket_ = options.plugins_dir + "/" + options.driver_name + "/dra.sock";
  s->registration_socket_ = options.registry_dir + "/" + options.driver_name + "-reg.sock";
  s->v1_service_ = std::make_unique<DraService<V1>>(helper);
  s->v1beta1_service_ = std::make_unique<DraService<V1beta1>>(helper);
  auto dra = listen(s->dra_socket_, {s->v1_service_.get(), s->v1beta1_service_.get()});
  if (!dra.ok()) return dra.status();
  s->dra_server_ = std::move(*dra);
  // Registration last: kubelet may call the DRA socket as soon as it sees this one.
  s->registration_service_ =
      std::make_unique<RegistrationService>(*s, options.driver_name, s->dra_socket_);
  auto registration = listen(s->registration_socket_, {s->registration_service_.get()});
  if (!registration.ok()) return registration.status();
  s->registration_server_ = std::move(*registration);
  SDRA_LOG_INFO << "kubelet plugin: registration socket " << s->registration_socket_
                << ", DRA socket " << s->dra_socket_;
  return s;
}

GrpcServer::~GrpcServer() { stop(); }

void GrpcServer::stop() {
  for (auto* server : {&registration_server_, &dra_server_}) {
    if (*server) {
      (*server)->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
      server->reset();
    }
  }
  std::error_code ec;
  if (!registration_socket_.empty()) std::filesystem::remove(registration_socket_, ec);
  if (!dra_socket_.empty()) std::filesystem::remove(dra_socket_, ec);
}

bool GrpcServer::registered() const {
  std::lock_guard lock(mu_);
  return registered_;
}

std::string GrpcServer::registrationError() const {
  std::lock_guard lock(mu_);
  return registration_error_;
}

void GrpcServer::setRegistration(bool registered, const std::string& error) {
  {
    std::lock_guard lock(mu_);
    registered_ = registered;
    registration_error_ = error;
  }
  if (registered) {
    SDRA_LOG_INFO << "kubelet plugin: registered with kubelet";
  } else {
    SDRA_LOG_ERROR << "kubelet plugin: kubelet refused the registration: " << error;
  }
}

}  // namespace sriovdra::kubelet_plugin
