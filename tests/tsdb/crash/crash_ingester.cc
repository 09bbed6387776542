// crash_ingester: the process that crash_test.py kills with SIGKILL.
//
// Ingest mode (default): opens the DB in --dir, finds where the data ends
// (the newest timestamp of any series), brings every series up to that
// point, then appends one sample per series per commit at a fixed step,
// forever. After each successful Commit it prints "ack <t>" (t: the
// timestamp just committed for every series) and flushes, so the driver
// knows what was acknowledged when the kill came. Every --maintain_every
// commits it runs Maintain() with a one-hour block range, so head
// persistence, WAL checkpoints and truncation happen during the rounds.
//
// Verify mode (--verify): opens the DB (failure to open is an error), and
// checks every series: the samples must be exactly the grid t0, t0+step,
// ... with the value Value(series, t), with no gap and no other value. It
// prints "max <t>" (the common newest timestamp, or -1 when empty),
// "blocks_max <t>" and "repair <text>" when the WAL was repaired, and fails
// when a series ends below --expect (the acknowledged mark) or when
// --clean is given and the WAL needed a repair.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tsdb/db/db.h"

namespace {

using gpumon::Labels;
using gpumon::Status;
using gpumon::tsdb::db::DB;
using gpumon::tsdb::db::DbOptions;

constexpr int64_t kT0 = 1'700'000'000'000;  // first timestamp, ms
constexpr int64_t kStep = 30'000;           // synthetic scrape interval

struct Flags {
  std::string dir;
  bool verify = false;
  bool clean = false;
  int64_t expect = -1;
  int series = 200;
  std::string sync = "batch";
  int maintain_every = 100;
  int commit_interval_us = 500;
  uint64_t segment_size = 256 << 10;
};

// Deterministic value of series `s` at `t` (exact in a double).
double Value(int s, int64_t t) {
  int64_t k = (t - kT0) / kStep;
  return static_cast<double>((k * 7919 + s * 104729) % 1000003) * 0.5 + s;
}

Labels SeriesLabels(int s) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d", s);
  return Labels{{"__name__", "crash_metric"}, {"job", "crash"}, {"series", buf}};
}

int SeriesIndex(const Labels& l) { return std::atoi(std::string(l.Get("series")).c_str()); }

DbOptions Options(const Flags& f) {
  DbOptions o;
  o.block_range_ms = 3600 * 1000;
  o.retention_ms = 0;  // the verifier expects every sample forever
  o.downsample = false;
  o.maintain_interval_ms = 0;  // Maintain() runs from the ingest loop
  o.wal.segment_size = f.segment_size;
  o.wal.sync_policy = f.sync == "always" ? gpumon::tsdb::wal::SyncPolicy::kAlways
                                         : gpumon::tsdb::wal::SyncPolicy::kBatch;
  return o;
}

// Checks every series; fills max_t[s] with the newest timestamp found
// (kT0 - kStep when the series is absent). Returns false on a bad sample.
bool Check(DB& db, int series, std::vector<int64_t>* max_t) {
  max_t->assign(series, kT0 - kStep);
  auto q = db.NewQuerier(gpumon::tsdb::kMinTime, gpumon::tsdb::kMaxTime);
  auto m = gpumon::tsdb::Matcher::Make(gpumon::tsdb::MatchType::kEqual, "__name__", "crash_metric");
  if (!m.ok()) return false;
  std::vector<gpumon::tsdb::Matcher> ms{*m};
  auto set = q->Select(ms);
  bool ok = true;
  while (set->Next()) {
    int s = SeriesIndex(set->labels());
    if (s < 0 || s >= series) {
      std::fprintf(stderr, "unexpected series %s\n", set->labels().ToString().c_str());
      return false;
    }
    auto it = set->Iterator();
    int64_t want = kT0;
    while (it->Next()) {
      auto smp = it->At();
      if (smp.t != want || smp.v != Value(s, smp.t)) {
        std::fprintf(stderr, "series %d: got (%" PRId64 ", %.17g), want (%" PRId64 ", %.17g)\n", s,
                     smp.t, smp.v, want, Value(s, want));
        ok = false;
        break;
      }
      want += kStep;
    }
    if (!it->status().ok()) {
      std::fprintf(stderr, "series %d: %s\n", s, it->status().message().c_str());
      ok = false;
    }
    (*max_t)[s] = want - kStep;
  }
  if (!set->status().ok()) {
    std::fprintf(stderr, "select: %s\n", set->status().message().c_str());
    ok = false;
  }
  return ok;
}

int Verify(const Flags& f) {
  auto db = DB::Open(f.dir, Options(f));
  if (!db.ok()) {
    std::fprintf(stderr, "open failed: %s\n", db.status().message().c_str());
    return 2;
  }
  auto stats = (*db)->Stats();
  int64_t blocks_max = -1;
  for (const auto& b : (*db)->blocks()) {
    if (b->meta().downsample_resolution_ms == 0 && b->meta().max_time > blocks_max) {
      blocks_max = b->meta().max_time;
    }
  }
  std::vector<int64_t> max_t;
  bool ok = Check(**db, f.series, &max_t);
  int64_t lo = INT64_MAX;
  for (int64_t t : max_t) lo = std::min(lo, t);
  if (lo < kT0) lo = -1;
  std::printf("max %" PRId64 "\nblocks_max %" PRId64 "\nblocks %zu\n", lo, blocks_max,
              stats.blocks);
  if (!stats.wal_repair.empty()) std::printf("repair %s\n", stats.wal_repair.c_str());
  if (f.expect >= 0 && lo < f.expect) {
    std::fprintf(stderr,
                 "acknowledged data lost: newest common sample %" PRId64 " < acknowledged %" PRId64
                 "\n",
                 lo, f.expect);
    ok = false;
  }
  if (f.clean && !stats.wal_repair.empty()) {
    std::fprintf(stderr, "WAL needed a repair: %s\n", stats.wal_repair.c_str());
    ok = false;
  }
  std::fflush(stdout);
  return ok ? 0 : 1;
}

int Ingest(const Flags& f) {
  auto opened = DB::Open(f.dir, Options(f));
  if (!opened.ok()) {
    std::fprintf(stderr, "open failed: %s\n", opened.status().message().c_str());
    return 2;
  }
  DB& db = **opened;
  std::vector<int64_t> max_t;
  if (!Check(db, f.series, &max_t)) return 1;
  int64_t hi = kT0 - kStep;
  for (int64_t t : max_t) hi = std::max(hi, t);
  std::vector<uint64_t> refs(f.series, 0);
  std::vector<Labels> labels;
  for (int s = 0; s < f.series; ++s) labels.push_back(SeriesLabels(s));
  auto app = db.Appender();
  // Catch up: a crash may have left some series one commit behind others.
  for (int s = 0; s < f.series; ++s) {
    for (int64_t t = max_t[s] + kStep; t <= hi; t += kStep) {
      auto r = app->Append(refs[s], labels[s], t, Value(s, t));
      if (!r.ok()) {
        std::fprintf(stderr, "catch-up append: %s\n", r.status().message().c_str());
        return 1;
      }
      refs[s] = *r;
    }
  }
  if (Status st = app->Commit(); !st.ok()) {
    std::fprintf(stderr, "catch-up commit: %s\n", st.message().c_str());
    return 1;
  }
  std::printf("ack %" PRId64 "\n", hi);
  std::fflush(stdout);
  for (int64_t n = 1;; ++n) {
    int64_t t = hi + n * kStep;
    for (int s = 0; s < f.series; ++s) {
      auto r = app->Append(refs[s], labels[s], t, Value(s, t));
      if (!r.ok()) {
        std::fprintf(stderr, "append: %s\n", r.status().message().c_str());
        return 1;
      }
      refs[s] = *r;
    }
    if (Status st = app->Commit(); !st.ok()) {
      std::fprintf(stderr, "commit: %s\n", st.message().c_str());
      return 1;
    }
    std::printf("ack %" PRId64 "\n", t);
    std::fflush(stdout);
    if (f.maintain_every > 0 && n % f.maintain_every == 0) {
      if (Status st = db.Maintain(); !st.ok()) {
        std::fprintf(stderr, "maintain: %s\n", st.message().c_str());
        return 1;
      }
    }
    if (f.commit_interval_us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(f.commit_interval_us));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      size_t n = std::strlen(name);
      if (a.compare(0, n, name) == 0 && a.size() > n && a[n] == '=') return argv[i] + n + 1;
      return nullptr;
    };
    if (a == "--verify") {
      f.verify = true;
    } else if (a == "--clean") {
      f.clean = true;
    } else if (const char* v = value("--dir")) {
      f.dir = v;
    } else if (const char* v = value("--expect")) {
      f.expect = std::strtoll(v, nullptr, 10);
    } else if (const char* v = value("--series")) {
      f.series = std::atoi(v);
    } else if (const char* v = value("--sync")) {
      f.sync = v;
    } else if (const char* v = value("--maintain_every")) {
      f.maintain_every = std::atoi(v);
    } else if (const char* v = value("--commit_interval_us")) {
      f.commit_interval_us = std::atoi(v);
    } else if (const char* v = value("--segment_size")) {
      f.segment_size = std::strtoull(v, nullptr, 10);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (f.dir.empty() || f.series <= 0 || (f.sync != "batch" && f.sync != "always")) {
    std::fprintf(stderr,
                 "usage: crash_ingester --dir=D [--verify [--expect=T] [--clean]] "
                 "[--sync=batch|always] [--series=N] [--maintain_every=N] "
                 "[--commit_interval_us=N] [--segment_size=BYTES]\n");
    return 2;
  }
  return f.verify ? Verify(f) : Ingest(f);
}
