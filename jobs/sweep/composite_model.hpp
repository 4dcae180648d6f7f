// K models run by one engine instance (one pending set): sub-model k's LPs get ids offset by the LP counts
// of the models before it, and every LP type is wrapped so that the wrapped type sees exactly the ids,
// event keys and random streams it would see running alone (ids shifted back on the way in, destinations
// shifted forward on the way out). Results of each sub-model therefore equal its standalone run. Used by
// `warpsim sweep --in-process K` (experimental, see docs/sweeps.md and docs/benchmarks.md).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/model.hpp"

namespace warpsim::sweep {

class CompositeModel final : public Model {
 public:
  // `seed` must be the engine's seed (the wrapped contexts rebuild each event's random stream from it).
  CompositeModel(std::vector<Model*> models, std::uint64_t seed);
  ~CompositeModel() override;

  std::uint64_t lp_count() const override { return total_; }
  std::size_t type_count() const override { return types_.size(); }
  LpType& type(std::size_t index) override;
  std::size_t type_of(LpId lp) const override;
  std::size_t payload_bytes() const override { return payload_bytes_; }
  SimTime lookahead() const override { return lookahead_; }

  LpId offset(std::size_t model) const { return offsets_[model]; }

 private:
  class OffsetType;
  std::vector<Model*> models_;
  std::vector<LpId> offsets_;           // first global LP id of each model
  std::vector<std::size_t> type_base_;  // first composite type index of each model
  std::vector<std::unique_ptr<OffsetType>> types_;
  std::uint64_t total_ = 0;
  std::size_t payload_bytes_ = 0;
  SimTime lookahead_ = 0;
};

}  // namespace warpsim::sweep
