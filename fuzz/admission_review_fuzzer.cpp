// An AdmissionReview body as any pod that reaches the webhook port can send it: decoded, then
// mutated and validated, then answered. Nothing may crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "operator/admission.h"

using namespace sriovdra;

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  auto review = op::parseAdmissionReview({reinterpret_cast<const char*>(data), size});
  if (!review.ok()) return 0;
  auto mutated = op::mutatePolicy(*review);
  op::ValidationContext ctx{.operator_namespace = "sriov-dra"};
  auto validated = op::validatePolicy(*review, ctx);
  (void)op::admissionReviewResponse(review->uid, mutated);
  (void)op::admissionReviewResponse(review->uid, validated);
  return 0;
}
