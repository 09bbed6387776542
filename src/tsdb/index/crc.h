// CRC-32C (Castagnoli polynomial, as Prometheus's block files and iSCSI use)
// over byte spans: the checksum of every block file.
//
// Contract: Crc32c(b, Crc32c(a)) equals the checksum of a followed by b, so
// sections can be summed piecewise. Uses the SSE4.2 crc32 instruction where
// the CPU has it (checked at run time) and a table-driven fallback
// elsewhere; both give identical results. Block reads checksum many small
// records, so per-call overhead matters as much as throughput.
#pragma once

#include <cstdint>
#include <span>

namespace gpumon::tsdb::index {

uint32_t Crc32c(std::span<const uint8_t> data, uint32_t crc = 0);
// The portable implementation, exposed for tests.
uint32_t Crc32cPortable(std::span<const uint8_t> data, uint32_t crc = 0);

}  // namespace gpumon::tsdb::index
