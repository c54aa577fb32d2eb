#pragma once
// Debian's Prometheus, started by a test with the scrape configuration it gives, and queried
// through its HTTP API.
#include <string>

#include "base/json.h"
#include "base/process.h"

namespace sriovdra::testing {

// Prometheus with `config` (prometheus.yml) in `dir`, its data and log there too, on a free port
// (`port`); stopped with the test.
ChildProcess startPrometheus(const std::string& dir, const std::string& config, int* port);
// An instant query of the Prometheus HTTP API into `out`; false when Prometheus refused it.
bool prometheusQuery(int port, const std::string& query, json::Document* out);
// The number of series an instant query returned (0 when refused).
size_t seriesCount(int port, const std::string& query);
// The log of the Prometheus started in `dir`.
std::string prometheusLog(const std::string& dir);

}  // namespace sriovdra::testing
