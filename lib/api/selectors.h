#pragma once
// Pure selector semantics.
// * Label maps (SriovNetworkNodePolicy.nodeSelector): every key must be present with the value;
//   an empty map selects everything.
// * metav1.LabelSelector (DeviceAttributes selection): matchLabels and matchExpressions ANDed;
//   In, NotIn, Exists, DoesNotExist; an empty selector selects everything.
// * core/v1.NodeSelector (SriovResourcePolicy.nodeSelector): terms ORed, requirements in a term
//   ANDed; In, NotIn, Exists, DoesNotExist, Gt, Lt; matchFields supports metadata.name; a term
//   with no requirements matches nothing; a selector with no terms matches nothing.
// Invalid selectors are reported by validate*() with a message saying what to change; the
// matchers treat an invalid requirement as not matching.
#include <map>
#include <string>
#include <vector>

#include "api/meta.h"

namespace sriovdra::api {

using Labels = std::map<std::string, std::string>;

bool matchesLabelMap(const Labels& selector, const Labels& labels);
bool matchesLabelSelector(const LabelSelector& selector, const Labels& labels);
bool matchesNodeSelector(const NodeSelector& selector, const std::string& node_name,
                         const Labels& labels);

// Problems with a selector, each a complete sentence prefixed with `path`.
std::vector<std::string> validateLabelSelector(const LabelSelector& selector,
                                               const std::string& path);
std::vector<std::string> validateNodeSelector(const NodeSelector& selector,
                                              const std::string& path);
// Kubernetes label key and value syntax.
bool isValidLabelKey(const std::string& key);
bool isValidLabelValue(const std::string& value);

}  // namespace sriovdra::api

namespace sriovdra::api {
// kubectl's label selector syntax: "a=b,c!=d,e,!f,g in (x,y),h notin (z)" ("" selects all).
Result<LabelSelector> parseLabelSelector(const std::string& text);
}  // namespace sriovdra::api
