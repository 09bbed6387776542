#include "cli/commands.h"
#include "exposition/text_writer.h"

namespace gpumon::cli {

std::unique_ptr<web::MetricsEndpoint> MakeCollectorEndpoint(const gpu::GpuCollector& collector,
                                                            gpu::NameScheme scheme) {
  const gpu::GpuCollector* c = &collector;
  return std::make_unique<web::MetricsEndpoint>(
      [c] { return c->snapshot().generation; },
      [c, scheme](exposition::Format format, std::string* out) {
        std::vector<exposition::MetricFamily> families;
        gpu::BuildFamilies(*c, c->snapshot(), scheme, &families);
        exposition::AppendFamilies(families, format, out);
        exposition::FinishText(format, out);
      });
}

}  // namespace gpumon::cli
