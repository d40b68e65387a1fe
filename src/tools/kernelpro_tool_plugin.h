/* kernelpro tool plugins: the C ABI a shared library implements to add micro-profiling tools
 * to kernelpro without rebuilding it (`kernelpro advise --tool-plugin libmytools.so`).
 *
 * The library exports one function,
 *
 *     const kp_tool* kernelpro_tool_plugin(int abi_version, int* tool_count);
 *
 * which returns an array of *tool_count tool descriptions (static storage: kernelpro reads it for
 * as long as the library is loaded), or NULL when it does not support `abi_version` (kernelpro
 * then reports the mismatch). Every string is UTF-8 and NUL-terminated.
 *
 * kernelpro calls `analyze` only when every metric in `required_metrics` is present; the tool reads
 * metrics through the kp_metrics callbacks, fills *out and returns 0 (non-zero reports an error
 * and the tool's output is dropped with a note). Strings written into *out must stay valid until
 * the next call of `analyze` of the same tool on the same thread (static or thread-local buffers
 * are fine); kernelpro copies them at once. `analyze` may be called from several threads.
 *
 * Metric names are those of kernelpro's MetricSet: ncu metric names (duration-weighted over the
 * candidate's kernels), "sass.*" and "timeline.*"; `kernelpro advise --list-metrics` prints them
 * for a record.
 */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

#define KERNELPRO_TOOL_PLUGIN_ABI_VERSION 1

typedef struct kp_metrics {
  const void* state;                                  /* kernelpro's, opaque */
  int (*has)(const void* state, const char* name);    /* 1 when present */
  double (*get)(const void* state, const char* name); /* NaN when absent */
  const char* bottleneck;   /* Stage-1 class: "compute", "memory", "latency", "mixed" or "" */
  int sm_major;             /* 9 on Hopper; 0 when unknown */
  const double* thresholds; /* the tool's thresholds after overrides, in declaration order */
} kp_metrics;

typedef struct kp_recommendation {
  const char* action;
  const char* expected_improvement;
} kp_recommendation;

typedef struct kp_observed {
  const char* name;
  double value;
  const char* unit;
} kp_observed;

typedef struct kp_tool_output {
  int triggered;        /* 0: the bottleneck is absent; the rest is ignored */
  const char* severity; /* "critical", "high", "medium" or "low" */
  const char* title;
  const char* summary;
  const char* root_cause;
  const kp_recommendation* recommendations; /* ranked, best first */
  int recommendation_count;
  const kp_observed* observed;
  int observed_count;
  const char* code_example; /* may be NULL */
} kp_tool_output;

typedef struct kp_threshold {
  const char* name;
  double value; /* the default */
  const char* unit;
  const char* description;
} kp_threshold;

typedef struct kp_tool {
  const char* name;   /* unique, snake_case */
  const char* source; /* "ncu", "timeline", "sass" or "energy" */
  const char* description;
  const char* const* required_metrics;
  int required_count;
  const char* const* bottlenecks; /* Stage-1 classes it runs for */
  int bottleneck_count;
  const kp_threshold* thresholds;
  int threshold_count;
  int priority;
  int (*analyze)(const kp_metrics* metrics, kp_tool_output* out);
} kp_tool;

typedef const kp_tool* (*kernelpro_tool_plugin_fn)(int abi_version, int* tool_count);

#ifdef __cplusplus
}
#endif
