// The tsdb::Querier of one block, for Block::NewQuerier (see block.h for the
// contract). Internal to the block module.
#pragma once

#include <cstdint>
#include <memory>

#include "tsdb/storage.h"

namespace gpumon::tsdb::block {

class Block;
class Tombstones;

std::unique_ptr<Querier> NewBlockQuerier(std::shared_ptr<const Block> block,
                                         std::shared_ptr<const Tombstones> tombstones, int64_t mint,
                                         int64_t maxt);

}  // namespace gpumon::tsdb::block
