#include "kube/own_writes.h"

#include <catch2/catch.hpp>

#include "kube/object_meta.h"

using sriovdra::kube::OwnWrites;

namespace {

enum class Op { kStart, kFinish, kIsOwn, kForget };

struct Step {
  Op op;
  const char* rv;  // kFinish: the answer ("" = failed); kIsOwn: the event's
  bool expected;   // kFinish: look again now; kIsOwn: needs no reconcile
};

struct Case {
  const char* name;
  std::vector<Step> steps;
};

}  // namespace

TEST_CASE("own writes are recognised whether the watch or the answer comes first",
          "[own_writes][unit]") {
  const std::vector<Case> cases = {
      {"nothing written: every event counts", {{Op::kIsOwn, "5", false}}},
      {"answer first, then our event; a later event is someone else's",
       {{Op::kStart},
        {Op::kFinish, "5", false},
        {Op::kIsOwn, "5", true},
        {Op::kIsOwn, "6", false}}},
      {"our event before the answer",
       {{Op::kStart}, {Op::kIsOwn, "5", true}, {Op::kFinish, "5", false}, {Op::kIsOwn, "5", true}}},
      {"someone else's event and ours before the answer: look again now",
       {{Op::kStart},
        {Op::kIsOwn, "4", true},
        {Op::kIsOwn, "5", true},
        {Op::kFinish, "5", true},
        {Op::kIsOwn, "5", true}}},
      {"someone else's event before the answer, ours after it: our event says look again, once",
       {{Op::kStart},
        {Op::kIsOwn, "4", true},
        {Op::kFinish, "5", false},
        {Op::kIsOwn, "5", false},
        {Op::kIsOwn, "5", true}}},
      {"a failed write: what was held is someone else's, and nothing is remembered",
       {{Op::kStart}, {Op::kIsOwn, "4", true}, {Op::kFinish, "", true}, {Op::kIsOwn, "4", false}}},
      {"a failed write with nothing held", {{Op::kStart}, {Op::kFinish, "", false}}},
      {"a new write replaces what the last one held",
       {{Op::kStart},
        {Op::kFinish, "5", false},
        {Op::kStart},
        {Op::kIsOwn, "5", true},
        {Op::kFinish, "7", false},
        {Op::kIsOwn, "7", false}}},
      {"forgotten after a delete",
       {{Op::kStart}, {Op::kFinish, "5", false}, {Op::kForget}, {Op::kIsOwn, "5", false}}},
      {"an answer without a start is no write of ours",
       {{Op::kFinish, "5", false}, {Op::kIsOwn, "5", false}}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    OwnWrites writes;
    for (size_t i = 0; i < c.steps.size(); ++i) {
      const Step& s = c.steps[i];
      INFO("step " << i);
      switch (s.op) {
        case Op::kStart:
          writes.start("node-a");
          break;
        case Op::kFinish:
          CHECK(writes.finish("node-a", s.rv) == s.expected);
          break;
        case Op::kIsOwn:
          CHECK(writes.isOwn("node-a", s.rv) == s.expected);
          break;
        case Op::kForget:
          writes.forget("node-a");
          break;
      }
    }
    CHECK_FALSE(writes.isOwn("node-b", "5"));  // keys do not mix
  }
}

TEST_CASE("the newer of two resourceVersions, as KEP-5504 compares them", "[own_writes][unit]") {
  using sriovdra::kube::newerResourceVersion;
  struct Case {
    const char* a;
    const char* b;
    const char* newer;
  };
  const std::vector<Case> cases = {
      {"5", "7", "7"},
      {"7", "5", "7"},
      {"99", "100", "100"},  // longer is newer, not "99" > "100" as text
      {"1234", "1234", "1234"},
      {"", "5", ""},  // not comparable: the first
      {"5", "", "5"},
      {"05", "7", "05"},  // a leading zero is not a resourceVersion of this form
      {"7", "abc", "7"},
  };
  for (const auto& c : cases) {
    INFO(c.a << " vs " << c.b);
    CHECK(newerResourceVersion(c.a, c.b) == c.newer);
  }
}
