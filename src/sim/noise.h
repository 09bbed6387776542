// Deterministic pseudo-random numbers for the simulator.
//
// Contract: every value is a pure function of its inputs (no hidden state
// beyond an explicit SplitMix generator), so a simulation driven by the same
// seed produces bit-identical results on every run and platform. Counter-based
// helpers (Hash/UnitAt) let the model draw noise for "step k" without keeping
// generator state in sync with how often it is queried.
#pragma once

#include <cstdint>

namespace gpumon::sim {

// SplitMix64 finaliser: a fast, well-mixed 64-bit bijection.
constexpr uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr uint64_t Hash(uint64_t a, uint64_t b) { return Mix64(a ^ Mix64(b)); }
constexpr uint64_t Hash(uint64_t a, uint64_t b, uint64_t c) { return Hash(Hash(a, b), c); }

// Maps a hash to [0, 1) using its top 53 bits.
constexpr double ToUnit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

// Sequential generator for things drawn in order (workload phases).
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return Mix64(state_);
  }
  double Unit() { return ToUnit(Next()); }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Unit(); }
  int64_t UniformInt(int64_t lo, int64_t hi) {  // inclusive bounds
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

}  // namespace gpumon::sim
