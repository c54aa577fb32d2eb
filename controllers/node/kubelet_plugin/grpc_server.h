#pragma once
// Serves the kubelet plugin over kubelet's unix sockets:
//   <registry-dir>/<driver>-reg.sock     pluginregistration.Registration: GetInfo answers type
//                                        DRAPlugin, the driver name, the DRA socket and the
//                                        versions v1.DRAPlugin, v1beta1.DRAPlugin (v1 first);
//   <plugins-dir>/<driver>/dra.sock      k8s.io.kubelet.pkg.apis.dra.{v1,v1beta1}.DRAPlugin.
// Kubelet's calls go to the helper (helper.h: claims read and checked, one call at a time), which
// calls the driver. A stale socket left by a crash is replaced at start; stop() removes both.
// registered() turns true when kubelet confirms the registration (NotifyRegistrationStatus).
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "node/kubelet_plugin/helper.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace sriovdra::kubelet_plugin {

struct GrpcServerOptions {
  std::string driver_name;
  std::string registry_dir;
  std::string plugins_dir;
};

class GrpcServer {
 public:
  // `helper` outlives the server.
  static Result<std::unique_ptr<GrpcServer>> start(Helper& helper,
                                                   const GrpcServerOptions& options);
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  void stop();
  bool registered() const;
  // What kubelet said when it refused the registration ("" = nothing).
  std::string registrationError() const;

  // Called by the registration service.
  void setRegistration(bool registered, const std::string& error);

 private:
  GrpcServer() = default;

  std::string registration_socket_;
  std::string dra_socket_;
  std::unique_ptr<grpc::Service> registration_service_;
  std::unique_ptr<grpc::Service> v1_service_;
  std::unique_ptr<grpc::Service> v1beta1_service_;
  std::unique_ptr<grpc::Server> registration_server_;
  std::unique_ptr<grpc::Server> dra_server_;
  mutable std::mutex mu_;
  bool registered_ = false;
  std::string registration_error_;
};

}  // namespace sriovdra::kubelet_plugin
