#include "cli/cluster_common.h"

#include "base/yaml.h"
#include "kube/config.h"

namespace sriovdra::cli {

int fail(Streams io, const std::string& message) {
  io.err << "error: " << message << "\n";
  return kFailed;
}

bool validOutput(const std::string& o, std::initializer_list<std::string_view> allowed) {
  return std::find(allowed.begin(), allowed.end(), o) != allowed.end();
}

Result<std::shared_ptr<kube::Client>> connect(const ClusterArgs& args) {
  auto config = kube::loadConfig({args.kubeconfig, args.context});
  if (!config.ok()) return config.status();
  return kube::Client::create(*config);
}

void printDocument(const json::Value& doc, const std::string& output, Streams io) {
  if (output == "json") {
    io.out << json::dump(doc) << "\n";
  } else {
    io.out << jsonToYaml(doc);
  }
}

void printTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 3, ' ');
    }
    out << line << "\n";
  }
}

std::string qualified(const kube::ObjectMeta& m) {
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) out.append(p);
  return out;
}

std::string numaText(int64_t numa) { return numa < 0 ? "-" : std::to_string(numa); }

void skippedWarnings(const ObjectBundle& bundle, Streams io) {
  for (const auto& s : bundle.skipped) io.err << "warning: skipped " << s << "\n";
}

}  // namespace sriovdra::cli
