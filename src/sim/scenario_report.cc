#include "sim/scenario_report.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <vector>

namespace gpumon::sim {
namespace {

struct Row {
  int gpu;
  size_t order;
  TruthRecord record;
};

}  // namespace

std::string GroundTruthJson(SimulatedFleet& fleet, std::string_view clock) {
  const int64_t now = fleet.NowMs();
  std::vector<Row> rows;
  std::vector<std::string> uuids(static_cast<size_t>(fleet.size()));
  for (int i = 0; i < fleet.size(); ++i) {
    fleet.WithGpu(i, [&](SimulatedGpu& g) {
      uuids[static_cast<size_t>(i)] = g.uuid();
      const auto& truth = g.truth();
      for (size_t k = 0; k < truth.size(); ++k) rows.push_back(Row{i, k, truth[k]});
    });
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.record.t_ms != b.record.t_ms) return a.record.t_ms < b.record.t_ms;
    if (a.gpu != b.gpu) return a.gpu < b.gpu;
    return a.order < b.order;
  });

  const std::vector<Scenario>& scenarios = fleet.scenarios();
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto key = [&w](std::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
  };
  auto str = [&w](std::string_view v) {
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.StartObject();
  key("format");
  str("gpumon-ground-truth/1");
  key("seed");
  w.Uint64(fleet.seed());
  key("spec");
  str(fleet.spec());
  key("gpus");
  w.Int(fleet.size());
  key("node_size");
  w.Int(fleet.node_size());
  key("clock");
  str(clock);
  key("speed");
  w.Double(fleet.speed());
  key("now_ms");
  w.Int64(now);
  key("scenarios");
  w.StartArray();
  for (const Scenario& s : scenarios) {
    w.StartObject();
    key("index");
    w.Int(s.index);
    key("name");
    str(s.name());
    key("text");
    str(s.text);
    key("gpus");
    w.StartArray();
    for (int g : s.gpus) w.Int(g);
    w.EndArray();
    key("start_ms");
    w.Int64(s.start_ms);
    key("params");
    w.StartObject();
    for (const ScenarioParam& p : s.params) {
      if (!p.text.empty()) {
        key(p.key);
        str(p.text);
      } else if (p.is_duration) {
        key(p.key + "_ms");
        w.Int64(static_cast<int64_t>(p.value));
      } else {
        key(p.key);
        w.Double(p.value);
      }
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  key("events");
  w.StartArray();
  for (const Row& r : rows) {
    w.StartObject();
    key("gpu");
    w.Int(r.gpu);
    key("uuid");
    str(uuids[static_cast<size_t>(r.gpu)]);
    key("node");
    w.Int(r.gpu / std::max(1, fleet.node_size()));
    key("event");
    str(TruthEventName(r.record.event));
    key("t_ms");
    w.Int64(r.record.t_ms);
    if (r.record.scenario >= 0 && static_cast<size_t>(r.record.scenario) < scenarios.size()) {
      key("scenario");
      str(scenarios[static_cast<size_t>(r.record.scenario)].name());
      key("scenario_index");
      w.Int(r.record.scenario);
    }
    if (r.record.detail >= 0) {
      const bool link =
          r.record.event == TruthEvent::kLinkDown || r.record.event == TruthEvent::kLinkUp;
      key(link ? "link" : "xid");
      w.Int64(r.record.detail);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace gpumon::sim
