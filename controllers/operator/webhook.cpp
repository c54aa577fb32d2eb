#include "operator/webhook.h"

#include "base/log.h"
#include "base/pointers.h"
#include "operator/admission.h"
#include "operator/rollout.h"

namespace sriovdra::op {

http::Response Webhook::handleMutate(const http::Request& req) {
  auto review = parseAdmissionReview(req.body);
  if (!review.ok()) return http::Response::text(400, review.status().message() + "\n");
  return http::Response::json(200, admissionReviewResponse(review->uid, mutatePolicy(*review)));
}

http::Response Webhook::handleValidate(const http::Request& req) {
  auto review = parseAdmissionReview(req.body);
  if (!review.ok()) return http::Response::text(400, review.status().message() + "\n");
  auto policies_list = caches_.node_policies.list();
  auto node_list = caches_.nodes.list();
  auto state_list = caches_.states.list();
  ValidationContext ctx{namespace_,
                        upstream_namespace_,
                        {pointers(policies_list), pointers(node_list), reportsOf(state_list)}};
  std::shared_ptr<const api::SriovOperatorConfig> config;
  if (review->kind == "SriovOperatorConfig") {
    config = caches_.operator_configs.get(namespace_, api::kDefaultOperatorConfigName);
    ctx.operator_config = config.get();
    for (const auto& s : state_list) {
      if (isReconfiguring(*s)) ctx.nodes_in_progress.push_back(s->metadata.name);
    }
  }
  auto decision = validatePolicy(*review, ctx);
  if (!decision.allowed) {
    SDRA_LOG_INFO << "admission: rejected " << review->kind << " in " << review->namespace_ << ": "
                  << decision.message;
  }
  return http::Response::json(200, admissionReviewResponse(review->uid, decision));
}

}  // namespace sriovdra::op
