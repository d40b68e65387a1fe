// How the ncu CSV reader (profile/ncu_csv.cc) combines kernels while it streams, with memory that
// does not grow with the counters of every launch: RunningAggregate adds each kernel's counters to
// per-column totals (AggregateKernels' duration-weighted rule, ncu_csv.h), and LongestKernels
// keeps every counter of only the longest kernels offered. AggregateKernels runs the same
// aggregation over kernels already in memory, so the reader and it cannot disagree.
//
// Internal to the reader and AggregateKernels (hence the namespace); nothing else should include
// it. Plain values, used by one thread at a time.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "profile/metrics.h"

namespace kernelpro::profile::ncu_csv_internal {

// What the header and units rows say about a column, worked out once rather than per cell.
struct Column {
  std::string name;
  bool metric = false;
  std::string unit;      // in base units
  bool has_unit = true;  // false for hand-made kernels without units (AggregateKernels)
  double factor = 1;
  bool sum = false;  // combined over kernels by adding up (else: duration-weighted mean)
};

// A kernel's identity, which every kernel keeps whatever the detail bound.
struct KernelIdentity {
  std::size_t index = 0;  // launch order among the rows read
  int id = -1;
  std::string name, block_size, grid_size;
  double duration = 0;  // ns; 0 when unknown
  bool has_duration = false;
};

// A kernel with every counter, in column order (NaN: absent).
struct DetailedKernel {
  KernelIdentity identity;
  std::vector<double> values;
};

// Longer first; on a tie the earlier launch. As a heap comparator it keeps the least of these at
// the front, ready to be evicted.
bool Longer(const KernelIdentity& a, const KernelIdentity& b);
bool Longer(const DetailedKernel& a, const DetailedKernel& b);

// The `limit` longest kernels offered, with their counters; memory bounded by `limit` rows.
class LongestKernels {
 public:
  explicit LongestKernels(std::size_t limit) : limit_(limit) {}
  void Offer(const KernelIdentity& identity, const std::vector<double>& values);
  // In heap order, not launch order.
  std::vector<DetailedKernel>& kernels() { return heap_; }

 private:
  std::size_t limit_;
  std::vector<DetailedKernel> heap_;
};

// AggregateKernels, one kernel at a time, per column. Both weightings are kept, because whether
// any kernel has a duration (and so whether durations weigh) is known only at the end.
struct ColumnTotal {
  double sum = 0, weighted_sum = 0, weight = 0;
  int count = 0;
};

class RunningAggregate {
 public:
  explicit RunningAggregate(std::size_t columns) : totals_(columns) {}

  // `values` in column order, NaN where the kernel lacks the counter.
  void Add(const KernelIdentity& k, const std::vector<double>& values);
  // The aggregate kernel over everything added: "aggregate (N kernels)", id -1.
  NcuKernel Finish(const std::vector<Column>& columns) const;

 private:
  std::vector<ColumnTotal> totals_;
  std::size_t kernels_ = 0;
  bool any_duration_ = false;
  std::string block_size_, grid_size_;
};

}  // namespace kernelpro::profile::ncu_csv_internal
