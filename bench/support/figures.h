#pragma once
// What a scale bench prints: every figure beside its floor, both measured in the same run on the
// same machine. A floor is the least the same work can cost here: the same API writes (same
// objects, sizes and concurrency) issued by a tight loop of our client against the same API
// server, the same files read in a loop, the JSON size of what must be cached. The ratio
// ours/floor is what a change to the product moves; the floor is what the machine and the API
// server allow.
// Report::print() writes a table for people, the notes (where the time goes), then one line per
// figure for scripts:
//   figure <name> ours=<x> floor=<y> ratio=<x/y>
// Times in seconds, memory in bytes, counts as they are.
#include <optional>
#include <string>
#include <vector>

namespace sriovdra::bench {

enum class Unit { kSeconds, kBytes, kCount };

struct Figure {
  std::string name;  // for scripts: lower case, '_' separated, "agent_republish"
  std::string what;  // for people: "one spec change touching every VF, republished"
  double ours = 0;
  double floor = 0;
  Unit unit = Unit::kSeconds;
  std::string floor_is;  // what the floor measured: "32 ResourceSlice applies, one at a time"
  double goal = 0;       // the ratio ours/floor should stay under; 0: no goal
  double ratio() const { return floor > 0 ? ours / floor : 0; }
  bool meetsGoal() const { return goal <= 0 || ratio() <= goal; }
};

class Report {
 public:
  explicit Report(std::string title) : title_(std::move(title)) {}
  void add(Figure f) { figures_.push_back(std::move(f)); }
  // Two figures of timed samples: `name` at the median and `name`_p99 (seconds).
  void addMedianAndP99(const std::string& name, const std::string& what,
                       const std::string& floor_is, const std::vector<double>& ours,
                       const std::vector<double>& floor);
  // A line printed under the table: where the time goes, how the run was set up.
  void note(std::string line) { notes_.push_back(std::move(line)); }
  // Prints everything to stdout; returns false when a figure misses its goal (the bench's exit
  // code says so, so a script notices).
  bool print() const;

 private:
  std::string title_;
  std::vector<Figure> figures_;
  std::vector<std::string> notes_;
};

// "1.234 s", "105.2 MiB", "17.3 KiB" (under 1 MiB), "1,021" as the table prints them.
std::string formatValue(double v, Unit unit);

// A bench's count argument (argv[index]: rounds, pods, nodes): `fallback` when absent, nullopt
// when it is not a whole number in [min, max].
std::optional<long> countArgument(int argc, char** argv, long fallback, long min, long max,
                                  int index = 1);

// The value below which the fraction q of `samples` lie (nearest rank); 0 for none.
double percentile(std::vector<double> samples, double q);

}  // namespace sriovdra::bench
