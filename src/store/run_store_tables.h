// The run store's tables, each declared once (columns.h says how): the one place a column's name,
// SQL declaration and record field are written. The schema (run_store_schema.cc), every insert
// and update (run_store.cc) and every read (run_store_reads.cc) are made from these lists;
// run_store_tables_test.cc checks that a database has exactly these columns and that a row of
// each table reads back as it was written.
//
// The columns stand in the order of the version-1 schema, so that a new database's CREATE TABLE
// text is that of the databases older kernelpros wrote.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "core/enum_names.h"
#include "store/columns.h"
#include "store/run_store.h"

namespace kernelpro::store {

// The runs table's status column: never rename.
inline constexpr std::array<std::pair<RunStatus, const char*>, 3> kRunStatusNames = {
    {{RunStatus::kRunning, "running"},
     {RunStatus::kFinished, "finished"},
     {RunStatus::kFailed, "failed"}}};

// The steps table's state column: never rename.
inline constexpr std::array<std::pair<StepState, const char*>, 2> kStepStateNames = {
    {{StepState::kStarted, "started"}, {StepState::kDone, "done"}}};

// ---- runs

inline constexpr Column<RunRecord> kRunColumns[] = {
    {"created_ms", "INTEGER NOT NULL", &RunRecord::created_ms, Written::kCreated},
    {"updated_ms", "INTEGER NOT NULL", &RunRecord::updated_ms, Written::kUpdated},
    {"problem_path", "TEXT NOT NULL", &RunRecord::problem_path},
    {"problem_hash", "TEXT NOT NULL", &RunRecord::problem_hash},
    {"config_json", "TEXT NOT NULL", &RunRecord::config},
    {"status", "TEXT NOT NULL CHECK (status IN ('running', 'finished', 'failed'))",
     [](const RunRecord& run) { return StoredValue(NameOf(kRunStatusNames, run.status)); },
     [](RowReader& row, RowReader::Column column, RunRecord& run) {
       const std::optional<RunStatus> status = ValueOf(kRunStatusNames, row.Text(column));
       if (!status) return Status::Internal("the run store holds an unknown run status");
       run.status = *status;
       return Status::Ok();
     }},
    {"status_message", "TEXT NOT NULL DEFAULT ''", &RunRecord::status_message},
    {"kernelpro_version", "TEXT NOT NULL", &RunRecord::kernelpro_version},
    {"reference_analysis_json", "TEXT", &RunRecord::reference_analysis}};
inline constexpr Table<RunRecord> kRunsTable = {"runs", &RunRecord::id, kRunColumns};

// ---- candidates

inline constexpr Column<CandidateRecord> kCandidateColumns[] = {
    {"run_id", "INTEGER NOT NULL REFERENCES runs(id)", &CandidateRecord::run_id},
    {"iteration", "INTEGER NOT NULL", &CandidateRecord::iteration},
    {"strategy", "TEXT NOT NULL", &CandidateRecord::strategy},
    {"source", "TEXT NOT NULL", &CandidateRecord::source},
    {"sha256", "TEXT NOT NULL", &CandidateRecord::sha256},
    {"created_ms", "INTEGER NOT NULL", &CandidateRecord::created_ms, Written::kCreated}};
inline constexpr Table<CandidateRecord> kCandidatesTable = {
    "candidates", &CandidateRecord::id, kCandidateColumns, "UNIQUE (run_id, sha256)"};

// ---- nodes

inline constexpr Column<NodeRecord> kNodeColumns[] = {
    {"run_id", "INTEGER NOT NULL REFERENCES runs(id)", &NodeRecord::run_id, Written::kFixed},
    {"parent_id", "INTEGER REFERENCES nodes(id)", &NodeRecord::parent_id},
    {"kind", "TEXT NOT NULL", &NodeRecord::kind},
    {"mode", "TEXT NOT NULL", &NodeRecord::mode},
    {"iteration", "INTEGER NOT NULL", &NodeRecord::iteration},
    {"status", "TEXT NOT NULL", &NodeRecord::status},
    {"reward", "REAL NOT NULL", &NodeRecord::reward},
    {"speedup", "REAL", &NodeRecord::speedup},
    {"speedup_lo", "REAL", &NodeRecord::speedup_lo},
    {"speedup_hi", "REAL", &NodeRecord::speedup_hi},
    {"visits", "INTEGER NOT NULL", &NodeRecord::visits},
    {"total_reward", "REAL NOT NULL", &NodeRecord::total_reward},
    {"terminal", "INTEGER NOT NULL", &NodeRecord::terminal},
    {"candidate_id", "INTEGER REFERENCES candidates(id)", &NodeRecord::candidate_id},
    {"created_ms", "INTEGER NOT NULL", &NodeRecord::created_ms, Written::kCreated}};
inline constexpr Index kNodeIndexes[] = {{"nodes_by_run", "run_id, status"},
                                         {"nodes_by_parent", "parent_id"}};
inline constexpr Table<NodeRecord> kNodesTable = {"nodes", &NodeRecord::id, kNodeColumns, nullptr,
                                                  kNodeIndexes};

// ---- what was learnt about a candidate

inline constexpr Column<EvaluationRecord> kEvaluationColumns[] = {
    {"candidate_id", "INTEGER NOT NULL REFERENCES candidates(id)", &EvaluationRecord::candidate_id},
    {"status", "TEXT NOT NULL", &EvaluationRecord::status},
    {"message", "TEXT NOT NULL", &EvaluationRecord::message},
    {"speedup", "REAL", &EvaluationRecord::speedup},
    {"speedup_lo", "REAL", &EvaluationRecord::speedup_lo},
    {"speedup_hi", "REAL", &EvaluationRecord::speedup_hi},
    {"reference_ms", "REAL", &EvaluationRecord::reference_ms},
    {"candidate_ms", "REAL", &EvaluationRecord::candidate_ms},
    {"total_seconds", "REAL NOT NULL", &EvaluationRecord::total_seconds},
    {"result_json", "TEXT NOT NULL", &EvaluationRecord::result},
    {"created_ms", "INTEGER NOT NULL", &EvaluationRecord::created_ms, Written::kCreated}};
inline constexpr Index kEvaluationIndexes[] = {{"evaluations_by_candidate", "candidate_id"}};
inline constexpr Table<EvaluationRecord> kEvaluationsTable = {
    "evaluations", &EvaluationRecord::id, kEvaluationColumns, nullptr, kEvaluationIndexes};

inline constexpr Column<MetricsRecord> kMetricsColumns[] = {
    {"candidate_id", "INTEGER NOT NULL REFERENCES candidates(id)", &MetricsRecord::candidate_id},
    {"metrics_json", "TEXT NOT NULL", &MetricsRecord::metrics},
    {"created_ms", "INTEGER NOT NULL", &MetricsRecord::created_ms, Written::kCreated}};
inline constexpr Index kMetricsIndexes[] = {{"metrics_by_candidate", "candidate_id"}};
inline constexpr Table<MetricsRecord> kMetricsTable = {"metrics", &MetricsRecord::id,
                                                       kMetricsColumns, nullptr, kMetricsIndexes};

inline constexpr Column<ToolOutputRecord> kToolOutputColumns[] = {
    {"candidate_id", "INTEGER NOT NULL REFERENCES candidates(id)", &ToolOutputRecord::candidate_id},
    {"analysis_json", "TEXT NOT NULL", &ToolOutputRecord::analysis},
    {"guidance", "TEXT NOT NULL", &ToolOutputRecord::guidance},
    {"created_ms", "INTEGER NOT NULL", &ToolOutputRecord::created_ms, Written::kCreated}};
inline constexpr Index kToolOutputIndexes[] = {{"tool_outputs_by_candidate", "candidate_id"}};
inline constexpr Table<ToolOutputRecord> kToolOutputsTable = {
    "tool_outputs", &ToolOutputRecord::id, kToolOutputColumns, nullptr, kToolOutputIndexes};

inline constexpr Column<ProfileAnalysisRecord> kProfileAnalysisColumns[] = {
    {"candidate_id", "INTEGER NOT NULL REFERENCES candidates(id)",
     &ProfileAnalysisRecord::candidate_id},
    {"feedback_mode", "TEXT NOT NULL", &ProfileAnalysisRecord::feedback_mode},
    {"bottleneck", "TEXT NOT NULL", &ProfileAnalysisRecord::bottleneck},
    {"severity", "TEXT NOT NULL", &ProfileAnalysisRecord::severity},
    {"analysis_json", "TEXT NOT NULL", &ProfileAnalysisRecord::analysis},
    {"feedback", "TEXT NOT NULL", &ProfileAnalysisRecord::feedback},
    {"created_ms", "INTEGER NOT NULL", &ProfileAnalysisRecord::created_ms, Written::kCreated}};
inline constexpr Index kProfileAnalysisIndexes[] = {
    {"profile_analyses_by_candidate", "candidate_id"}};
inline constexpr Table<ProfileAnalysisRecord> kProfileAnalysesTable = {
    "profile_analyses", &ProfileAnalysisRecord::id, kProfileAnalysisColumns, nullptr,
    kProfileAnalysisIndexes};

// ---- LLM exchanges

inline constexpr Column<LlmExchangeRecord> kLlmExchangeColumns[] = {
    {"run_id", "INTEGER NOT NULL REFERENCES runs(id)", &LlmExchangeRecord::run_id},
    {"iteration", "INTEGER NOT NULL", &LlmExchangeRecord::iteration},
    {"purpose", "TEXT NOT NULL", &LlmExchangeRecord::purpose},
    {"step_key", "TEXT NOT NULL", &LlmExchangeRecord::step_key},
    {"provider", "TEXT NOT NULL", &LlmExchangeRecord::provider},
    {"model", "TEXT NOT NULL", &LlmExchangeRecord::model},
    // Whether the exchange succeeded, for the totals' failure count; the record says it by its
    // error, so the column is written only.
    {"ok", "INTEGER NOT NULL",
     [](const LlmExchangeRecord& exchange) { return ToStored(!exchange.error.has_value()); },
     nullptr},
    {"input_tokens", "INTEGER NOT NULL", &LlmExchangeRecord::input_tokens},
    {"output_tokens", "INTEGER NOT NULL", &LlmExchangeRecord::output_tokens},
    {"cost_usd", "REAL NOT NULL", &LlmExchangeRecord::cost_usd},
    {"cost_known", "INTEGER NOT NULL", &LlmExchangeRecord::cost_known},
    {"latency_ms", "REAL NOT NULL", &LlmExchangeRecord::latency_ms},
    {"attempts", "INTEGER NOT NULL", &LlmExchangeRecord::attempts},
    {"request_json", "TEXT NOT NULL", &LlmExchangeRecord::request},
    {"response_json", "TEXT", &LlmExchangeRecord::response},
    {"error_json", "TEXT", &LlmExchangeRecord::error},
    {"started_ms", "INTEGER NOT NULL", &LlmExchangeRecord::started_ms, Written::kCreated},
    {"created_ms", "INTEGER NOT NULL", &LlmExchangeRecord::created_ms, Written::kNow}};
inline constexpr Index kLlmExchangeIndexes[] = {
    {"llm_exchanges_by_iteration", "run_id, iteration"}};
inline constexpr Table<LlmExchangeRecord> kLlmExchangesTable = {
    "llm_exchanges", &LlmExchangeRecord::id, kLlmExchangeColumns, nullptr, kLlmExchangeIndexes};

// ---- memory

inline constexpr Column<MemoryRecord> kMemoryColumns[] = {
    {"run_id", "INTEGER NOT NULL REFERENCES runs(id)", &MemoryRecord::run_id},
    {"section", "TEXT NOT NULL", &MemoryRecord::section},
    {"text", "TEXT NOT NULL", &MemoryRecord::text},
    {"iteration", "INTEGER NOT NULL", &MemoryRecord::iteration},
    {"created_ms", "INTEGER NOT NULL", &MemoryRecord::created_ms, Written::kCreated}};
inline constexpr Index kMemoryIndexes[] = {{"memory_entries_by_run", "run_id"}};
inline constexpr Table<MemoryRecord> kMemoryEntriesTable = {
    "memory_entries", &MemoryRecord::id, kMemoryColumns, nullptr, kMemoryIndexes};

// ---- step journal: a step's identity is its StepKey, whose fields are four columns

// A column that holds a field of the step's key.
template <auto kField>
constexpr Column<StepRecord> StepKeyColumn(const char* name, const char* declaration) {
  return {name, declaration, [](const StepRecord& step) { return ToStored(step.key.*kField); },
          [](RowReader& row, RowReader::Column column, StepRecord& step) {
            ReadField(row, column, step.key.*kField);
            return Status::Ok();
          }};
}

inline constexpr Column<StepRecord> kStepColumns[] = {
    StepKeyColumn<&StepKey::run_id>("run_id", "INTEGER NOT NULL REFERENCES runs(id)"),
    StepKeyColumn<&StepKey::iteration>("iteration", "INTEGER NOT NULL"),
    StepKeyColumn<&StepKey::step>("step", "TEXT NOT NULL"),
    StepKeyColumn<&StepKey::key>("key", "TEXT NOT NULL"),
    {"state", "TEXT NOT NULL CHECK (state IN ('started', 'done'))",
     [](const StepRecord& step) { return StoredValue(NameOf(kStepStateNames, step.state)); },
     [](RowReader& row, RowReader::Column column, StepRecord& step) {
       // Anything but "done" reads as started: the step is redone, never skipped by mistake.
       step.state = ValueOf(kStepStateNames, row.Text(column)).value_or(StepState::kStarted);
       return Status::Ok();
     }},
    {"attempts", "INTEGER NOT NULL", &StepRecord::attempts},
    {"payload_json", "TEXT NOT NULL", &StepRecord::payload},
    {"started_ms", "INTEGER NOT NULL", &StepRecord::started_ms},
    {"done_ms", "INTEGER", &StepRecord::done_ms}};
inline constexpr Table<StepRecord> kStepsTable = {"steps", &StepRecord::id, kStepColumns,
                                                  "UNIQUE (run_id, iteration, step, key)"};

// Every table, in the order the schema creates them.
inline std::vector<TableShape> RunStoreTables() {
  return {ShapeOf(kRunsTable),
          ShapeOf(kCandidatesTable),
          ShapeOf(kNodesTable),
          ShapeOf(kEvaluationsTable),
          ShapeOf(kMetricsTable),
          ShapeOf(kToolOutputsTable),
          ShapeOf(kProfileAnalysesTable),
          ShapeOf(kLlmExchangesTable),
          ShapeOf(kMemoryEntriesTable),
          ShapeOf(kStepsTable)};
}

}  // namespace kernelpro::store
