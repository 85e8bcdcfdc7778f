#include "common/metrics/exposition.hpp"

#include <vector>

#include <prometheus/text_serializer.h>

#include "common/metrics/process_stats.hpp"

namespace fg::metrics {

prometheus::ClientMetric& family_writer::sample(std::initializer_list<label> labels) {
  auto& m = family_.metric.emplace_back();
  for (const auto& [name, value] : labels) m.label.push_back({std::string(name), std::string(value)});
  return m;
}

family_writer& family_writer::add(double value, std::initializer_list<label> labels) {
  auto& m = sample(labels);
  if (family_.type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  return *this;
}

family_writer& family_writer::add(const histogram& h, double scale, std::initializer_list<label> labels) {
  auto& m = sample(labels);
  const auto bounds = h.bounds();
  const auto counts = h.counts();
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    cumulative += counts[i];
    m.histogram.bucket.push_back({cumulative, static_cast<double>(bounds[i]) * scale});
  }
  cumulative += counts.back();
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = static_cast<double>(h.sum()) * scale;
  return *this;
}

family_writer exposition::family(std::string name, std::string help, metric_kind kind) {
  auto& f = families_.emplace_back();
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = kind == metric_kind::counter ? prometheus::MetricType::Counter
           : kind == metric_kind::gauge ? prometheus::MetricType::Gauge
                                        : prometheus::MetricType::Histogram;
  return family_writer(f);
}

std::string exposition::text() const {
  const std::vector<prometheus::MetricFamily> all(families_.begin(), families_.end());
  return prometheus::TextSerializer().Serialize(all);
}

void exposition::process_metrics(std::string_view component, std::string_view version) {
  family("framegate_build_info", "Always 1; labels tell the binary's version and which framegate process it is.",
         metric_kind::gauge)
      .add(1, {{"version", version}, {"component", component}});
  const process_stats p = read_process_stats();
  counter("framegate_process_cpu_seconds_total", "User and system CPU time of the process, in seconds.", p.cpu_seconds);
  gauge("framegate_process_resident_memory_bytes", "Resident set size of the process.",
        static_cast<double>(p.resident_bytes));
  gauge("framegate_process_open_fds", "Open file descriptors of the process.", static_cast<double>(p.open_fds));
  gauge("framegate_process_max_fds", "The process's limit of open file descriptors.", static_cast<double>(p.max_fds));
  gauge("framegate_process_start_time_seconds", "Start time of the process, in seconds since the Unix epoch.",
        p.start_time_seconds);
}

}  // namespace fg::metrics
