// Builds the Prometheus text exposition of one scrape. Components hand it
// plain numbers and histograms taken from their snapshots; prometheus-cpp
// provides the data model and the text format (escaping, ordering of
// histogram samples), so framegate writes neither.
//
//   exposition out;
//   out.counter("framegate_gateway_connections_opened_total", "Handshakes accepted.", n);
//   auto& closed = out.family("framegate_gateway_connections_closed_total", "...", metric_kind::counter);
//   closed.add(5, {{"code", "1000"}});
//   std::string text = out.text();
//
// Names must follow Prometheus conventions; a family must be declared once
// per scrape (a second declaration of the same name is a programming error
// caught by the tests that parse every scrape).
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include <prometheus/metric_family.h>

#include "common/metrics/histogram.hpp"

namespace fg::metrics {

enum class metric_kind { counter, gauge, histogram };

using label = std::pair<std::string_view, std::string_view>;

class family_writer {
 public:
  explicit family_writer(prometheus::MetricFamily& f) : family_(f) {}
  // One sample of a counter or gauge.
  family_writer& add(double value, std::initializer_list<label> labels = {});
  // One histogram; `scale` converts its unit to the exported one (1e-9:
  // nanoseconds to seconds).
  family_writer& add(const histogram& h, double scale = 1.0, std::initializer_list<label> labels = {});

 private:
  prometheus::ClientMetric& sample(std::initializer_list<label> labels);
  prometheus::MetricFamily& family_;
};

class exposition {
 public:
  family_writer family(std::string name, std::string help, metric_kind kind);
  void counter(std::string name, std::string help, double value) {
    family(std::move(name), std::move(help), metric_kind::counter).add(value);
  }
  void gauge(std::string name, std::string help, double value) {
    family(std::move(name), std::move(help), metric_kind::gauge).add(value);
  }
  void histogram(std::string name, std::string help, const metrics::histogram& h, double scale = 1.0) {
    family(std::move(name), std::move(help), metric_kind::histogram).add(h, scale);
  }

  // The text format (version 0.0.4), families in declaration order.
  [[nodiscard]] std::string text() const;

  // `framegate_build_info{version,component} 1` and the process's own
  // resources (framegate_process_*: CPU, RSS, descriptors, start time).
  void process_metrics(std::string_view component, std::string_view version);

 private:
  std::deque<prometheus::MetricFamily> families_;  // stable addresses for family_writer
};

// The Content-Type of text() for an HTTP response.
inline constexpr const char* text_content_type = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace fg::metrics
