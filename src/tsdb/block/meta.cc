#include "tsdb/block/meta.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "tsdb/block/json.h"
#include "tsdb/index/file_writer.h"

namespace gpumon::tsdb::block {
namespace {

class Reader {
 public:
  explicit Reader(const std::string& where) : where_(where) {}

  Status Int(const JsonValue& obj, std::string_view key, int64_t* out, bool required = true) {
    const JsonValue* v = obj.Find(key);
    if (v == nullptr) return required ? Missing(key) : Status::Ok();
    if (v->type != JsonValue::Type::kNumber || !v->is_int) return Wrong(key, "an integer");
    *out = v->integer;
    return Status::Ok();
  }
  Status Uint(const JsonValue& obj, std::string_view key, uint64_t* out) {
    int64_t v = 0;
    Status s = Int(obj, key, &v, false);
    if (!s.ok()) return s;
    if (v < 0) return Wrong(key, "a non-negative integer");
    *out = static_cast<uint64_t>(v);
    return Status::Ok();
  }
  Status Str(const JsonValue& obj, std::string_view key, std::string* out) {
    const JsonValue* v = obj.Find(key);
    if (v == nullptr) return Missing(key);
    if (v->type != JsonValue::Type::kString) return Wrong(key, "a string");
    *out = v->string;
    return Status::Ok();
  }
  const JsonValue* Obj(const JsonValue& obj, std::string_view key, Status* s) {
    const JsonValue* v = obj.Find(key);
    if (v != nullptr && v->type != JsonValue::Type::kObject) *s = Wrong(key, "an object");
    return v != nullptr && v->type == JsonValue::Type::kObject ? v : nullptr;
  }
  Status Missing(std::string_view key) {
    return Status::Error(where_ + ": missing member \"" + std::string(key) + "\"");
  }
  Status Wrong(std::string_view key, const char* what) {
    return Status::Error(where_ + ": member \"" + std::string(key) + "\" is not " + what);
  }
  Status Error(const std::string& what) { return Status::Error(where_ + ": " + what); }

 private:
  const std::string& where_;
};

}  // namespace

std::string MetaToJson(const BlockMeta& m) {
  std::ostringstream o;
  o << "{\n";
  o << "  \"ulid\": " << JsonQuote(m.id) << ",\n";
  o << "  \"minTime\": " << m.min_time << ",\n";
  o << "  \"maxTime\": " << m.max_time << ",\n";
  o << "  \"stats\": {\n";
  o << "    \"numSamples\": " << m.stats.num_samples << ",\n";
  o << "    \"numSeries\": " << m.stats.num_series << ",\n";
  o << "    \"numChunks\": " << m.stats.num_chunks << ",\n";
  o << "    \"numBytes\": " << m.stats.num_bytes << "\n";
  o << "  },\n";
  o << "  \"compaction\": {\n";
  o << "    \"level\": " << m.compaction_level << ",\n";
  o << "    \"sources\": [";
  for (size_t i = 0; i < m.sources.size(); ++i) o << (i ? ", " : "") << JsonQuote(m.sources[i]);
  o << "],\n";
  o << "    \"parents\": [";
  for (size_t i = 0; i < m.parents.size(); ++i) {
    const BlockParent& p = m.parents[i];
    o << (i ? ",\n      " : "\n      ") << "{\"ulid\": " << JsonQuote(p.id)
      << ", \"minTime\": " << p.min_time << ", \"maxTime\": " << p.max_time << "}";
  }
  o << (m.parents.empty() ? "]\n" : "\n    ]\n");
  o << "  },\n";
  o << "  \"downsample\": {\n";
  o << "    \"resolution\": " << m.downsample_resolution_ms << "\n";
  o << "  },\n";
  o << "  \"version\": " << kMetaVersion << "\n";
  o << "}\n";
  return o.str();
}

Result<BlockMeta> MetaFromJson(std::string_view json, const std::string& where) {
  auto parsed = ParseJson(json);
  if (!parsed.ok()) return parsed.status().WithContext(where);
  const JsonValue& root = *parsed;
  Reader r(where);
  if (root.type != JsonValue::Type::kObject) return r.Error("not a JSON object");
  BlockMeta m;
  int64_t version = 0;
  Status s = r.Int(root, "version", &version);
  if (!s.ok()) return s;
  if (version != kMetaVersion) {
    return r.Error("unsupported version " + std::to_string(version));
  }
  s = r.Str(root, "ulid", &m.id);
  if (s.ok()) s = r.Int(root, "minTime", &m.min_time);
  if (s.ok()) s = r.Int(root, "maxTime", &m.max_time);
  if (!s.ok()) return s;
  if (m.min_time >= m.max_time) return r.Error("minTime is not below maxTime");
  if (const JsonValue* st = r.Obj(root, "stats", &s)) {
    s = r.Uint(*st, "numSamples", &m.stats.num_samples);
    if (s.ok()) s = r.Uint(*st, "numSeries", &m.stats.num_series);
    if (s.ok()) s = r.Uint(*st, "numChunks", &m.stats.num_chunks);
    if (s.ok()) s = r.Uint(*st, "numBytes", &m.stats.num_bytes);
  }
  if (!s.ok()) return s;
  if (const JsonValue* c = r.Obj(root, "compaction", &s)) {
    int64_t level = 1;
    s = r.Int(*c, "level", &level, false);
    if (!s.ok()) return s;
    if (level < 1 || level > std::numeric_limits<int>::max()) {
      return r.Error("compaction level out of range");
    }
    m.compaction_level = static_cast<int>(level);
    if (const JsonValue* src = c->Find("sources")) {
      if (src->type != JsonValue::Type::kArray) return r.Wrong("sources", "an array");
      for (const JsonValue& v : src->array) {
        if (v.type != JsonValue::Type::kString) return r.Wrong("sources", "an array of strings");
        m.sources.push_back(v.string);
      }
    }
    if (const JsonValue* par = c->Find("parents")) {
      if (par->type != JsonValue::Type::kArray) return r.Wrong("parents", "an array");
      for (const JsonValue& v : par->array) {
        if (v.type != JsonValue::Type::kObject) return r.Wrong("parents", "an array of objects");
        BlockParent p;
        s = r.Str(v, "ulid", &p.id);
        if (s.ok()) s = r.Int(v, "minTime", &p.min_time);
        if (s.ok()) s = r.Int(v, "maxTime", &p.max_time);
        if (!s.ok()) return s;
        m.parents.push_back(std::move(p));
      }
    }
  }
  if (!s.ok()) return s;
  if (const JsonValue* d = r.Obj(root, "downsample", &s)) {
    s = r.Int(*d, "resolution", &m.downsample_resolution_ms, false);
    if (s.ok() && m.downsample_resolution_ms < 0) s = r.Error("negative downsample resolution");
  }
  if (!s.ok()) return s;
  return m;
}

Result<BlockMeta> ReadMeta(const std::string& block_dir) {
  const std::string path = block_dir + "/" + kMetaFileName;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("open " + path + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Error("read " + path + ": I/O error");
  return MetaFromJson(ss.str(), path);
}

Status WriteMeta(const std::string& block_dir, const BlockMeta& meta) {
  const std::string json = MetaToJson(meta);
  return index::WriteFileAtomically(block_dir + "/" + kMetaFileName,
                                    {reinterpret_cast<const uint8_t*>(json.data()), json.size()});
}

}  // namespace gpumon::tsdb::block
