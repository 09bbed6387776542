// Kill -9 test: a child process logs records and reports each acknowledged
// Log() through a pipe; the parent SIGKILLs it at a random moment, then
// replays the WAL and checks that every acknowledged record is there,
// intact and in order, and that the log continues cleanly the next round.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "tsdb/wal/wal_reader.h"
#include "tsdb/wal/wal_writer.h"
#include "wal_test_util.h"

namespace gpumon::tsdb::wal {
namespace {

using testing::CheckRecord;
using testing::MakeRecord;
using testing::TempDir;

constexpr int kMaxBatch = 4;
constexpr uint64_t kBytesPerRound = 12u << 20;  // bounds disk use per round

// Mostly small records, every sixteenth up to 6 MiB, so that a kill often
// lands inside a write() and leaves a torn tail.
size_t MaxExtra(int64_t id) { return id % 16 == 15 ? (6u << 20) : 4000; }
std::vector<uint8_t> Record(int64_t id) {
  return MakeRecord(static_cast<uint64_t>(id), MaxExtra(id));
}

// Child: never returns.
[[noreturn]] void RunChild(const std::string& dir, WalOptions options, int64_t first_id, int fd,
                           uint64_t seed) {
  // Records are made up front so the logging loop spends its time in
  // write(), where a kill leaves a torn record.
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> recs;
  std::vector<int> batches;
  uint64_t bytes = 0;
  for (int64_t id = first_id; bytes < kBytesPerRound;) {
    int n = 1 + static_cast<int>(rng() % kMaxBatch);
    for (int i = 0; i < n; ++i, ++id) {
      recs.push_back(Record(id));
      bytes += recs.back().size();
    }
    batches.push_back(n);
  }
  auto w = WalWriter::Open(dir, options);
  if (!w.ok()) _exit(3);
  int64_t acked = first_id - 1;  // first message: the writer is open
  if (write(fd, &acked, sizeof acked) != sizeof acked) _exit(5);
  std::vector<std::span<const uint8_t>> spans;
  size_t next = 0;
  for (int n : batches) {
    spans.assign(recs.begin() + static_cast<std::ptrdiff_t>(next),
                 recs.begin() + static_cast<std::ptrdiff_t>(next + n));
    if (!(*w)->Log(spans).ok()) _exit(4);
    next += static_cast<size_t>(n);
    acked += n;
    if (write(fd, &acked, sizeof acked) != sizeof acked) _exit(5);
  }
  // Done before the kill: wait for it.
  for (;;) pause();
}

uint64_t DirBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

struct RoundResult {
  int64_t last_acked = -1;
  bool child_failed = false;
};

RoundResult RunRound(const std::string& dir, WalOptions options, int64_t first_id,
                     std::mt19937_64& rng) {
  RoundResult result;
  result.last_acked = first_id - 1;
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe";
    return result;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    RunChild(dir, options, first_id, fds[1], rng());
  }
  close(fds[1]);
  // Drain acknowledgements until the kill moment so the child never blocks.
  // The moment is drawn from when the child reports its writer open.
  auto kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool started = false;
  int64_t buf[512];
  size_t partial = 0;  // bytes of an incomplete ack carried over
  auto drain = [&](int timeout_ms) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return false;
    ssize_t n = read(fds[0], reinterpret_cast<char*>(buf) + partial, sizeof buf - partial);
    if (n <= 0) return false;
    if (!started) {
      started = true;
      kill_at = std::chrono::steady_clock::now() + std::chrono::microseconds(rng() % 25000);
    }
    size_t total = partial + static_cast<size_t>(n);
    size_t whole = total / sizeof(int64_t);
    if (whole > 0) result.last_acked = buf[whole - 1];
    partial = total % sizeof(int64_t);
    std::memmove(buf, reinterpret_cast<char*>(buf) + whole * sizeof(int64_t), partial);
    return true;
  };
  while (std::chrono::steady_clock::now() < kill_at) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        kill_at - std::chrono::steady_clock::now());
    drain(static_cast<int>(left.count()));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  while (drain(0)) {
  }
  close(fds[0]);
  result.child_failed = !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  return result;
}

void CrashRounds(SyncPolicy policy, int rounds) {
  TempDir tmp;
  std::mt19937_64 rng(12345 + static_cast<int>(policy));
  WalOptions options;
  options.sync_policy = policy;
  options.segment_size = 256 << 10;
  options.sync_interval = std::chrono::milliseconds(3);
  std::string dir = tmp.path() + "/wal";
  int64_t next_id = 0;
  int torn_rounds = 0;
  int idle_rounds = 0;  // killed before the first acknowledgement
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  int round = 0;
  for (; round < rounds && std::chrono::steady_clock::now() < deadline; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    RoundResult r = RunRound(dir, options, next_id, rng);
    ASSERT_FALSE(r.child_failed) << "child exited on its own (WAL error)";

    auto reader = WalReader::Open(dir);
    ASSERT_TRUE(reader.ok());
    int64_t expect = 0;
    while ((*reader)->Next()) {
      auto rec = (*reader)->record();
      ASSERT_EQ(rec.size() >= 8 ? CheckRecord({rec.begin(), rec.end()}, MaxExtra(expect)) : -1,
                expect)
          << "record damaged or out of order";
      ++expect;
    }
    ASSERT_TRUE((*reader)->status().ok()) << (*reader)->status().message();
    if ((*reader)->torn_tail()) ++torn_rounds;
    // Every acknowledged record is there; at most one unacknowledged batch
    // (in flight at the kill) follows.
    ASSERT_GE(expect, r.last_acked + 1) << "acknowledged records lost";
    ASSERT_LE(expect, r.last_acked + 1 + kMaxBatch);
    if (r.last_acked + 1 == next_id) ++idle_rounds;
    next_id = expect;
    if (std::filesystem::exists(dir) && DirBytes(dir) > (64u << 20)) {  // bound disk use
      std::filesystem::remove_all(dir);
      next_id = 0;
    }
  }
  std::printf("policy %d: %d rounds, %d ended in a torn tail, %d killed before any ack\n",
              static_cast<int>(policy), round, torn_rounds, idle_rounds);
}

TEST(WalCrashTest, KillDuringBatchSyncedLogging) { CrashRounds(SyncPolicy::kBatch, 25); }
TEST(WalCrashTest, KillDuringAlwaysSyncedLogging) { CrashRounds(SyncPolicy::kAlways, 15); }
TEST(WalCrashTest, KillDuringUnsyncedLogging) { CrashRounds(SyncPolicy::kNever, 15); }

}  // namespace
}  // namespace gpumon::tsdb::wal
