#include "exposition/metric_family.h"

namespace gpumon::exposition {

const char* MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kInfo:
      return "info";
    case MetricType::kStateSet:
      return "stateset";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kGaugeHistogram:
      return "gaugehistogram";
    case MetricType::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace gpumon::exposition
