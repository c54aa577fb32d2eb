#pragma once
// The admission webhook's HTTP handlers (/mutate, /validate) over admission.h, checking a policy
// against the others in the operator's caches. Any thread; the caches are read-only here.
#include <string>

#include "http/server.h"
#include "operator/caches.h"

namespace sriovdra::op {

class Webhook {
 public:
  Webhook(const Caches& caches, std::string ns, std::string upstream_ns)
      : caches_(caches), namespace_(std::move(ns)), upstream_namespace_(std::move(upstream_ns)) {}
  http::Response handleMutate(const http::Request& req);
  http::Response handleValidate(const http::Request& req);

 private:
  const Caches& caches_;
  const std::string namespace_;
  const std::string upstream_namespace_;
};

}  // namespace sriovdra::op
