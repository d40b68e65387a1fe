/* An example kernelpro tool plugin in plain C: flags global atomics that throttle the load/store
 * unit. Build it as a shared library and pass it to kernelpro:
 *
 *   cc -shared -fPIC -O2 -I src/tools examples/plugins/atomic_contention.c -o libatomic_contention.so
 *   kernelpro advise --from DIR --name NAME --tool-plugin ./libatomic_contention.so
 *
 * (The build also makes it: build/libkernelpro_example_plugin.so.)
 */
#include <math.h>
#include <stdio.h>

#include "kernelpro_tool_plugin.h"

static const char* const kRequired[] = {
    "sass.atomic",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
};
static const char* const kBottlenecks[] = {"memory", "latency", "mixed"};
static const kp_threshold kThresholds[] = {
    {"lg_throttle", 20.0, "%", "LSU-queue stalls above this, with atomics in the code, mean contention"},
    {"critical", 40.0, "%", "the same stall above this is critical"},
};

static int Analyze(const kp_metrics* m, kp_tool_output* out) {
  static _Thread_local char title[160], summary[320];
  static _Thread_local kp_observed observed[2];
  static const kp_recommendation recommendations[] = {
      {"Reduce within the warp first (__reduce_add_sync or __shfl_down_sync), then one atomic per warp",
       "up to 32x fewer global atomics"},
      {"Accumulate per block in shared memory and flush one atomic per block at the end",
       "atomics drop by the block size; often 2-10x on histogram-like kernels"},
      {"Spread hot addresses (privatised copies reduced afterwards) when many threads hit one counter",
       "removes serialisation on the hot address"},
  };
  double atomics = m->get(m->state, "sass.atomic");
  double stall = m->get(m->state, "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct");
  out->triggered = atomics > 0 && stall > m->thresholds[0];
  if (!out->triggered) return 0;
  out->severity = stall >= m->thresholds[1] ? "critical" : "high";
  snprintf(title, sizeof title, "Global atomics throttle the load/store queue (%.0f%% lg_throttle stalls)", stall);
  snprintf(summary, sizeof summary,
           "The kernel issues %.0f atomic instruction(s) per pass over its code and warps spend %.1f%% of "
           "their time waiting for the LSU queue.", atomics, stall);
  out->title = title;
  out->summary = summary;
  out->root_cause = "Every thread sends its own read-modify-write to global memory; atomics on the same "
                    "or nearby addresses serialise in L2, so the queue in front of it fills.";
  observed[0] = (kp_observed){"sass.atomic", atomics, "instructions"};
  observed[1] = (kp_observed){"smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct", stall, "%"};
  out->observed = observed;
  out->observed_count = 2;
  out->recommendations = recommendations;
  out->recommendation_count = 3;
  out->code_example =
      "float v = partial;\n"
      "for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"
      "if ((threadIdx.x & 31) == 0) atomicAdd(out, v);  // one atomic per warp";
  return 0;
}

static const kp_tool kTools[] = {{
    "atomic_contention", "ncu", "Global atomics that throttle the load/store unit",
    kRequired, 2, kBottlenecks, 3, kThresholds, 2, 60, Analyze,
}};

const kp_tool* kernelpro_tool_plugin(int abi_version, int* tool_count) {
  if (abi_version != KERNELPRO_TOOL_PLUGIN_ABI_VERSION) return NULL;
  *tool_count = 1;
  return kTools;
}
