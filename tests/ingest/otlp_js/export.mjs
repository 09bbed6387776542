// Exports one batch of metrics of every instrument kind to an OTLP/HTTP
// endpoint with the OpenTelemetry JavaScript SDK's protobuf exporter, the
// way an instrumented Node.js service would, then a second batch, and
// exits non-zero if any export fails.
//
//   node export.mjs <url of /v1/metrics> <cumulative|delta> <service.name>
//
// The values are fixed so the test driver can check what the agent
// serves (tests/ingest/test_otlp_js.py). The delta run uses gzip.
import { diag, DiagConsoleLogger, DiagLogLevel } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';

const [url, temporality, service] = process.argv.slice(2);
if (!url || !['cumulative', 'delta'].includes(temporality) || !service) {
  console.error('usage: node export.mjs <url> <cumulative|delta> <service.name>');
  process.exit(2);
}
diag.setLogger(new DiagConsoleLogger(), DiagLogLevel.WARN);

const delta = temporality === 'delta';
const exporter = new OTLPMetricExporter({
  url,
  compression: delta ? 'gzip' : 'none',
  temporalityPreference: delta ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
});
// The reader logs a failed export and goes on; record every result so a
// failure ends the script with a non-zero status.
const failures = [];
const recording = {
  export(metrics, done) {
    exporter.export(metrics, (result) => {
      if (result.code !== 0) failures.push(String(result.error ?? `code ${result.code}`));
      done(result);
    });
  },
  forceFlush: () => exporter.forceFlush(),
  shutdown: () => exporter.shutdown(),
  selectAggregationTemporality: (kind) => exporter.selectAggregationTemporality(kind),
  selectAggregation: (kind) => exporter.selectAggregation(kind),
};
const reader = new PeriodicExportingMetricReader({
  exporter: recording,
  exportIntervalMillis: 3_600_000, // exports happen on forceFlush only
});
const provider = new MeterProvider({
  resource: resourceFromAttributes({
    'service.name': service,
    rank: 1,
    local_rank: 1,
    node: 'node-a',
    'deployment.environment': 'test',
  }),
  readers: [reader],
});
const meter = provider.getMeter('gpumon-otlp-js-test', '1.0.0');

const steps = meter.createCounter('training.steps', { unit: '{step}', description: 'Steps done' });
const queue = meter.createUpDownCounter('queue.depth', { unit: '{request}' });
const temperature = meter.createGauge('device.temperature', { unit: 'Cel' });
let utilization = 0.25;
meter
  .createObservableGauge('model.flops.utilization', { unit: '1' })
  .addCallback((result) => result.observe(utilization));
const duration = meter.createHistogram('step.duration', {
  unit: 's',
  advice: { explicitBucketBoundaries: [0.1, 1, 10] },
});

// First batch.
steps.add(5, { phase: 'train' });
queue.add(3);
temperature.record(61);
for (const v of [0.05, 0.5, 5]) duration.record(v);
await reader.forceFlush();

// Second batch: counters and histograms grow, gauges change.
steps.add(2, { phase: 'train' });
steps.add(1, { phase: 'eval' });
queue.add(-1);
temperature.record(65);
utilization = 0.42;
duration.record(50);
await reader.forceFlush();

await provider.shutdown();
if (failures.length > 0) {
  console.error(`export failed: ${failures.join('; ')}`);
  process.exit(1);
}
console.log(`exported 2 batches (${temporality}) as ${service}`);
