#include "profile/ncu_aggregate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "profile/ncu_catalog.h"
#include "profile/ncu_csv.h"

namespace kernelpro::profile {
namespace ncu_csv_internal {

bool Longer(const KernelIdentity& a, const KernelIdentity& b) {
  if (a.duration != b.duration) return a.duration > b.duration;
  return a.index < b.index;
}

bool Longer(const DetailedKernel& a, const DetailedKernel& b) {
  return Longer(a.identity, b.identity);
}

void LongestKernels::Offer(const KernelIdentity& identity, const std::vector<double>& values) {
  auto longer = [](const DetailedKernel& a, const DetailedKernel& b) { return Longer(a, b); };
  if (limit_ == 0) return;
  if (heap_.size() == limit_) {
    if (!Longer(identity, heap_.front().identity)) return;
    std::pop_heap(heap_.begin(), heap_.end(), longer);
    heap_.back().identity = identity;
    heap_.back().values = values;
  } else {
    heap_.push_back({identity, values});
  }
  std::push_heap(heap_.begin(), heap_.end(), longer);
}

void RunningAggregate::Add(const KernelIdentity& k, const std::vector<double>& values) {
  if (kernels_++ == 0) {
    block_size_ = k.block_size;
    grid_size_ = k.grid_size;
  }
  if (k.block_size != block_size_) block_size_.clear();
  if (k.grid_size != grid_size_) grid_size_.clear();
  if (k.duration > 0) any_duration_ = true;
  const double weight = std::max(0.0, k.duration);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;
    ColumnTotal& t = totals_[i];
    t.sum += values[i];
    t.weighted_sum += weight * values[i];
    t.weight += weight;
    ++t.count;
  }
}

NcuKernel RunningAggregate::Finish(const std::vector<Column>& columns) const {
  NcuKernel aggregate;
  aggregate.name =
      "aggregate (" + std::to_string(kernels_) + (kernels_ == 1 ? " kernel)" : " kernels)");
  if (kernels_ == 0) return aggregate;
  aggregate.block_size = block_size_;
  aggregate.grid_size = grid_size_;
  for (std::size_t i = 0; i < totals_.size(); ++i) {
    const ColumnTotal& t = totals_[i];
    if (t.count == 0) continue;
    double value;
    if (columns[i].sum) {
      value = t.sum;
    } else if (any_duration_ && t.weight > 0) {
      value = t.weighted_sum / t.weight;
    } else {
      value = t.sum / t.count;  // equal weights, or only kernels without a duration have it
    }
    // ncu prints metric columns in name order, so the end is the right hint.
    aggregate.values.insert_or_assign(aggregate.values.end(), columns[i].name, value);
    if (columns[i].has_unit) {
      aggregate.units.insert_or_assign(aggregate.units.end(), columns[i].name, columns[i].unit);
    }
  }
  return aggregate;
}

}  // namespace ncu_csv_internal

using ncu_csv_internal::Column;
using ncu_csv_internal::KernelIdentity;
using ncu_csv_internal::RunningAggregate;

NcuKernel AggregateKernels(const std::vector<NcuKernel>& kernels) {
  // The reader's aggregation, over kernels already in memory: one column per metric any kernel
  // has, its unit from the first kernel that gives one.
  std::vector<Column> columns;
  std::map<std::string_view, std::size_t> column_of;
  for (const NcuKernel& kernel : kernels) {
    for (const auto& [name, value] : kernel.values) {
      auto [it, added] = column_of.try_emplace(name, columns.size());
      if (added) {
        columns.emplace_back();
        columns.back().name = name;
        columns.back().has_unit = false;
      }
      Column& column = columns[it->second];
      if (!column.has_unit) {
        if (auto unit = kernel.units.find(name); unit != kernel.units.end()) {
          column.unit = unit->second;
          column.has_unit = true;
        }
      }
    }
  }
  for (Column& column : columns) column.sum = NcuAggregation(column.name, column.unit) == "sum";
  RunningAggregate aggregate(columns.size());
  std::vector<double> values;
  for (std::size_t index = 0; index < kernels.size(); ++index) {
    const NcuKernel& kernel = kernels[index];
    KernelIdentity identity;
    identity.index = index;
    identity.block_size = kernel.block_size;
    identity.grid_size = kernel.grid_size;
    identity.duration = kernel.duration_ns();
    values.assign(columns.size(), std::nan(""));
    for (const auto& [name, value] : kernel.values) values[column_of.at(name)] = value;
    aggregate.Add(identity, values);
  }
  return aggregate.Finish(columns);
}

}  // namespace kernelpro::profile
