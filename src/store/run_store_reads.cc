// Reading a run store: the column list of each table's rows next to the function that reads them
// (through RowReader, by column name), and the RunStore methods that look rows up. Every method
// takes the store's mutex for its statement only; none writes.
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/enum_names.h"
#include "store/row_reader.h"
#include "store/run_store.h"

namespace kernelpro::store {

namespace {

// The runs table's status column: never rename. CreateRun and SetRunStatus write these names
// through RunStatusName.
constexpr std::array<std::pair<RunStatus, const char*>, 3> kRunStatusNames = {
    {{RunStatus::kRunning, "running"},
     {RunStatus::kFinished, "finished"},
     {RunStatus::kFailed, "failed"}}};

// ---- statements: prepared, bound and read ---------------------------------------------------

// "SELECT <columns> <rest>" prepared, with `params` bound.
Result<SqlStatement> Select(SqlDatabase& db, const char* columns, const char* rest,
                            std::initializer_list<SqlValue> params) {
  Result<SqlStatement> statement = db.Prepare(std::string("SELECT ") + columns + " " + rest);
  if (!statement.ok()) return statement.status();
  if (Status bound = statement->Bind(params); !bound.ok()) return bound;
  return statement;
}

// Runs `statement` (prepared and bound, or why not) and reads every row with `read`.
template <typename Record>
Result<std::vector<Record>> ReadAll(Result<SqlStatement> statement,
                                    Result<Record> (*read)(const SqlStatement&)) {
  if (!statement.ok()) return statement.status();
  std::vector<Record> records;
  while (true) {
    Result<bool> row = statement->Step();
    if (!row.ok()) return row.status();
    if (!*row) return records;
    Result<Record> record = read(*statement);
    if (!record.ok()) return record.status();
    records.push_back(std::move(*record));
  }
}

// Runs `statement` (prepared and bound, or why not) and reads its first row, if any.
template <typename Record>
Result<std::optional<Record>> ReadFirst(Result<SqlStatement> statement,
                                        Result<Record> (*read)(const SqlStatement&)) {
  if (!statement.ok()) return statement.status();
  Result<bool> row = statement->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Record>();
  Result<Record> record = read(*statement);
  if (!record.ok()) return record.status();
  return std::optional<Record>(std::move(*record));
}

// The record a lookup by id found; NotFound with `missing` when there was none.
template <typename Record>
Result<Record> Found(Result<std::optional<Record>> record, const std::string& missing) {
  if (!record.ok()) return record.status();
  if (!*record) return Status::NotFound(missing);
  return std::move(**record);
}

// ---- row readers: the column lists and the functions that read them go together --------------

constexpr const char* kRunColumns =
    "id, problem_path, problem_hash, config_json, status, status_message, kernelpro_version, "
    "reference_analysis_json, created_ms, updated_ms";

Result<RunRecord> ReadRun(const SqlStatement& statement) {
  RowReader row(statement, "runs");
  RunRecord run;
  run.id = row.Integer("id");
  run.problem_path = row.Text("problem_path");
  run.problem_hash = row.Text("problem_hash");
  run.config = row.JsonValue("config_json");
  const std::optional<RunStatus> status = ValueOf(kRunStatusNames, row.Text("status"));
  if (!status) return Status::Internal("the run store holds an unknown run status");
  run.status = *status;
  run.status_message = row.Text("status_message");
  run.kernelpro_version = row.Text("kernelpro_version");
  run.reference_analysis = row.OptionalJson("reference_analysis_json");
  run.created_ms = row.Integer("created_ms");
  run.updated_ms = row.Integer("updated_ms");
  if (!row.ok()) return row.status();
  return run;
}

constexpr const char* kCandidateColumns =
    "id, run_id, iteration, strategy, source, sha256, created_ms";

Result<CandidateRecord> ReadCandidate(const SqlStatement& statement) {
  RowReader row(statement, "candidates");
  CandidateRecord candidate;
  candidate.id = row.Integer("id");
  candidate.run_id = row.Integer("run_id");
  candidate.iteration = row.Int("iteration");
  candidate.strategy = row.Text("strategy");
  candidate.source = row.Text("source");
  candidate.sha256 = row.Text("sha256");
  candidate.created_ms = row.Integer("created_ms");
  if (!row.ok()) return row.status();
  return candidate;
}

constexpr const char* kNodeColumns =
    "id, run_id, parent_id, kind, mode, iteration, status, reward, speedup, speedup_lo, "
    "speedup_hi, visits, total_reward, terminal, candidate_id, created_ms";

Result<NodeRecord> ReadNode(const SqlStatement& statement) {
  RowReader row(statement, "nodes");
  NodeRecord node;
  node.id = row.Integer("id");
  node.run_id = row.Integer("run_id");
  node.parent_id = row.OptionalInteger("parent_id");
  node.kind = row.Text("kind");
  node.mode = row.Text("mode");
  node.iteration = row.Int("iteration");
  node.status = row.Text("status");
  node.reward = row.Real("reward");
  node.speedup = row.OptionalReal("speedup");
  node.speedup_lo = row.OptionalReal("speedup_lo");
  node.speedup_hi = row.OptionalReal("speedup_hi");
  node.visits = row.Integer("visits");
  node.total_reward = row.Real("total_reward");
  node.terminal = row.Bool("terminal");
  node.candidate_id = row.OptionalInteger("candidate_id");
  node.created_ms = row.Integer("created_ms");
  if (!row.ok()) return row.status();
  return node;
}

constexpr const char* kEvaluationColumns =
    "id, candidate_id, status, message, speedup, speedup_lo, speedup_hi, reference_ms, "
    "candidate_ms, total_seconds, result_json, created_ms";

Result<EvaluationRecord> ReadEvaluation(const SqlStatement& statement) {
  RowReader row(statement, "evaluations");
  EvaluationRecord evaluation;
  evaluation.id = row.Integer("id");
  evaluation.candidate_id = row.Integer("candidate_id");
  evaluation.status = row.Text("status");
  evaluation.message = row.Text("message");
  evaluation.speedup = row.OptionalReal("speedup");
  evaluation.speedup_lo = row.OptionalReal("speedup_lo");
  evaluation.speedup_hi = row.OptionalReal("speedup_hi");
  evaluation.reference_ms = row.OptionalReal("reference_ms");
  evaluation.candidate_ms = row.OptionalReal("candidate_ms");
  evaluation.total_seconds = row.Real("total_seconds");
  evaluation.result = row.JsonValue("result_json");
  evaluation.created_ms = row.Integer("created_ms");
  if (!row.ok()) return row.status();
  return evaluation;
}

constexpr const char* kMetricsColumns = "id, candidate_id, metrics_json, created_ms";

Result<MetricsRecord> ReadMetrics(const SqlStatement& statement) {
  RowReader row(statement, "metrics");
  MetricsRecord metrics;
  metrics.id = row.Integer("id");
  metrics.candidate_id = row.Integer("candidate_id");
  metrics.metrics = row.JsonValue("metrics_json");
  metrics.created_ms = row.Integer("created_ms");
  if (!row.ok()) return row.status();
  return metrics;
}

constexpr const char* kToolOutputColumns = "id, candidate_id, analysis_json, guidance, created_ms";

Result<ToolOutputRecord> ReadToolOutput(const SqlStatement& statement) {
  RowReader row(statement, "tool_outputs");
  ToolOutputRecord output;
  output.id = row.Integer("id");
  output.candidate_id = row.Integer("candidate_id");
  output.analysis = row.JsonValue("analysis_json");
  output.guidance = row.Text("guidance");
  output.created_ms = row.Integer("created_ms");
  if (!row.ok()) return row.status();
  return output;
}

constexpr const char* kProfileAnalysisColumns =
    "id, candidate_id, feedback_mode, bottleneck, severity, analysis_json, feedback, created_ms";

Result<ProfileAnalysisRecord> ReadProfileAnalysis(const SqlStatement& statement) {
  RowReader row(statement, "profile_analyses");
  ProfileAnalysisRecord analysis;
  analysis.id = row.Integer("id");
  analysis.candidate_id = row.Integer("candidate_id");
  analysis.feedback_mode = row.Text("feedback_mode");
  analysis.bottleneck = row.Text("bottleneck");
  analysis.severity = row.Text("severity");
  analysis.analysis = row.JsonValue("analysis_json");
  analysis.feedback = row.Text("feedback");
  analysis.created_ms = row.Integer("created_ms");
  if (!row.ok()) return row.status();
  return analysis;
}

constexpr const char* kLlmExchangeColumns =
    "id, run_id, iteration, purpose, step_key, provider, model, input_tokens, output_tokens, "
    "cost_usd, cost_known, latency_ms, attempts, request_json, response_json, error_json, "
    "started_ms, created_ms";

Result<LlmExchangeRecord> ReadLlmExchange(const SqlStatement& statement) {
  RowReader row(statement, "llm_exchanges");
  LlmExchangeRecord exchange;
  exchange.id = row.Integer("id");
  exchange.run_id = row.Integer("run_id");
  exchange.iteration = row.Int("iteration");
  exchange.purpose = row.Text("purpose");
  exchange.step_key = row.Text("step_key");
  exchange.provider = row.Text("provider");
  exchange.model = row.Text("model");
  exchange.input_tokens = row.Integer("input_tokens");
  exchange.output_tokens = row.Integer("output_tokens");
  exchange.cost_usd = row.Real("cost_usd");
  exchange.cost_known = row.Bool("cost_known");
  exchange.latency_ms = row.Real("latency_ms");
  exchange.attempts = row.Int("attempts");
  exchange.request = row.JsonValue("request_json");
  exchange.response = row.OptionalJson("response_json");
  exchange.error = row.OptionalJson("error_json");
  exchange.started_ms = row.Integer("started_ms");
  exchange.created_ms = row.Integer("created_ms");
  if (!row.ok()) return row.status();
  return exchange;
}

// Sums over llm_exchanges, each named so that ReadLlmTotals finds it (an expression without an
// alias has no name SQLite promises); no alias is also a column's name, so none can be mistaken
// for one.
constexpr const char* kLlmTotalsColumns =
    "COUNT(*) AS exchanges, COALESCE(SUM(ok = 0), 0) AS failures, "
    "COALESCE(SUM(input_tokens), 0) AS sum_input_tokens, "
    "COALESCE(SUM(output_tokens), 0) AS sum_output_tokens, "
    "COALESCE(SUM(cost_usd), 0.0) AS sum_cost_usd, COALESCE(MIN(cost_known), 1) AS cost_complete, "
    "COALESCE(SUM(latency_ms), 0.0) AS sum_latency_ms";

Result<LlmTotals> ReadLlmTotals(const SqlStatement& statement) {
  RowReader row(statement, "llm_exchanges");
  LlmTotals totals;
  totals.exchanges = row.Integer("exchanges");
  totals.failures = row.Integer("failures");
  totals.input_tokens = row.Integer("sum_input_tokens");
  totals.output_tokens = row.Integer("sum_output_tokens");
  totals.cost_usd = row.Real("sum_cost_usd");
  totals.cost_complete = row.Bool("cost_complete");
  totals.latency_ms = row.Real("sum_latency_ms");
  if (!row.ok()) return row.status();
  return totals;
}

// ReadLlmTotals of a row grouped by iteration, which follows the sums.
Result<LlmTotals> ReadLlmTotalsWithIteration(const SqlStatement& statement) {
  Result<LlmTotals> totals = ReadLlmTotals(statement);
  if (!totals.ok()) return totals;
  RowReader row(statement, "llm_exchanges");
  totals->iteration = row.Int("iteration");
  if (!row.ok()) return row.status();
  return totals;
}

constexpr const char* kMemoryColumns = "id, run_id, section, text, iteration, created_ms";

Result<MemoryRecord> ReadMemory(const SqlStatement& statement) {
  RowReader row(statement, "memory_entries");
  MemoryRecord entry;
  entry.id = row.Integer("id");
  entry.run_id = row.Integer("run_id");
  entry.section = row.Text("section");
  entry.text = row.Text("text");
  entry.iteration = row.Int("iteration");
  entry.created_ms = row.Integer("created_ms");
  if (!row.ok()) return row.status();
  return entry;
}

constexpr const char* kStepColumns =
    "id, run_id, iteration, step, key, state, attempts, payload_json, started_ms, done_ms";

Result<StepRecord> ReadStep(const SqlStatement& statement) {
  RowReader row(statement, "steps");
  StepRecord step;
  step.id = row.Integer("id");
  step.key.run_id = row.Integer("run_id");
  step.key.iteration = row.Int("iteration");
  step.key.step = row.Text("step");
  step.key.key = row.Text("key");
  step.state = row.Text("state") == "done" ? StepState::kDone : StepState::kStarted;
  step.attempts = row.Int("attempts");
  step.payload = row.JsonValue("payload_json");
  step.started_ms = row.Integer("started_ms");
  step.done_ms = row.OptionalInteger("done_ms");
  if (!row.ok()) return row.status();
  return step;
}

}  // namespace

const char* RunStatusName(RunStatus status) { return NameOf(kRunStatusNames, status); }

// ---- runs -----------------------------------------------------------------------------------

Result<RunRecord> RunStore::GetRun(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return Found(ReadFirst(Select(db_, kRunColumns, "FROM runs WHERE id = ?", {run_id}), &ReadRun),
               "no run " + std::to_string(run_id) + " in " + path_);
}

Result<std::vector<RunRecord>> RunStore::ListRuns() {
  std::lock_guard lock(mutex_);
  return ReadAll(Select(db_, kRunColumns, "FROM runs ORDER BY id", {}), &ReadRun);
}

// ---- candidates -----------------------------------------------------------------------------

Result<CandidateRecord> RunStore::GetCandidate(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return Found(
      ReadFirst(Select(db_, kCandidateColumns, "FROM candidates WHERE id = ?", {candidate_id}),
                &ReadCandidate),
      "no candidate " + std::to_string(candidate_id));
}

Result<std::optional<CandidateRecord>> RunStore::FindCandidateByHash(std::int64_t run_id,
                                                                     const std::string& sha256) {
  std::lock_guard lock(mutex_);
  return ReadFirst(Select(db_, kCandidateColumns, "FROM candidates WHERE run_id = ? AND sha256 = ?",
                          {run_id, sha256}),
                   &ReadCandidate);
}

// ---- nodes ----------------------------------------------------------------------------------

Result<NodeRecord> RunStore::GetNode(std::int64_t node_id) {
  std::lock_guard lock(mutex_);
  return Found(
      ReadFirst(Select(db_, kNodeColumns, "FROM nodes WHERE id = ?", {node_id}), &ReadNode),
      "no node " + std::to_string(node_id));
}

Result<std::vector<NodeRecord>> RunStore::ListNodes(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll(Select(db_, kNodeColumns, "FROM nodes WHERE run_id = ? ORDER BY id", {run_id}),
                 &ReadNode);
}

Result<std::optional<NodeRecord>> RunStore::BestCorrectNode(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(
      Select(db_, kNodeColumns,
             "FROM nodes WHERE run_id = ? AND status = 'correct' AND speedup IS NOT NULL "
             "ORDER BY speedup DESC, id ASC LIMIT 1",
             {run_id}),
      &ReadNode);
}

// ---- what was learnt about a candidate ------------------------------------------------------

Result<std::optional<EvaluationRecord>> RunStore::LatestEvaluation(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(
      Select(db_, kEvaluationColumns,
             "FROM evaluations WHERE candidate_id = ? ORDER BY id DESC LIMIT 1", {candidate_id}),
      &ReadEvaluation);
}

Result<std::optional<MetricsRecord>> RunStore::LatestMetrics(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(
      Select(db_, kMetricsColumns, "FROM metrics WHERE candidate_id = ? ORDER BY id DESC LIMIT 1",
             {candidate_id}),
      &ReadMetrics);
}

Result<std::optional<ToolOutputRecord>> RunStore::LatestToolOutput(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(
      Select(db_, kToolOutputColumns,
             "FROM tool_outputs WHERE candidate_id = ? ORDER BY id DESC LIMIT 1", {candidate_id}),
      &ReadToolOutput);
}

Result<std::optional<ProfileAnalysisRecord>> RunStore::LatestProfileAnalysis(
    std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return ReadFirst(Select(db_, kProfileAnalysisColumns,
                          "FROM profile_analyses WHERE candidate_id = ? ORDER BY id DESC LIMIT 1",
                          {candidate_id}),
                   &ReadProfileAnalysis);
}

// ---- LLM exchanges --------------------------------------------------------------------------

Result<std::vector<LlmExchangeRecord>> RunStore::ListLlmExchanges(std::int64_t run_id,
                                                                  std::optional<int> iteration) {
  std::lock_guard lock(mutex_);
  const SqlValue wanted = iteration ? SqlValue(std::int64_t{*iteration}) : SqlValue(nullptr);
  return ReadAll(Select(db_, kLlmExchangeColumns,
                        "FROM llm_exchanges WHERE run_id = ?1 AND (?2 IS NULL OR iteration = ?2) "
                        "ORDER BY id",
                        {run_id, wanted}),
                 &ReadLlmExchange);
}

Result<std::vector<LlmExchangeRecord>> RunStore::ListLlmExchangesForStep(const StepKey& step) {
  std::lock_guard lock(mutex_);
  return ReadAll(
      Select(db_, kLlmExchangeColumns,
             "FROM llm_exchanges WHERE run_id = ? AND iteration = ? AND step_key = ? ORDER BY id",
             {step.run_id, std::int64_t{step.iteration}, StepKeyText(step)}),
      &ReadLlmExchange);
}

Result<LlmTotals> RunStore::LlmTotalsForRun(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  Result<std::optional<LlmTotals>> totals =
      ReadFirst(Select(db_, kLlmTotalsColumns, "FROM llm_exchanges WHERE run_id = ?", {run_id}),
                &ReadLlmTotals);
  if (!totals.ok()) return totals.status();
  return totals->value_or(LlmTotals{});
}

Result<std::vector<LlmTotals>> RunStore::LlmTotalsByIteration(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll(
      Select(
          db_, kLlmTotalsColumns,
          ", iteration FROM llm_exchanges WHERE run_id = ? GROUP BY iteration ORDER BY iteration",
          {run_id}),
      &ReadLlmTotalsWithIteration);
}

// ---- memory ---------------------------------------------------------------------------------

Result<std::vector<MemoryRecord>> RunStore::ListMemoryEntries(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll(
      Select(db_, kMemoryColumns, "FROM memory_entries WHERE run_id = ? ORDER BY id", {run_id}),
      &ReadMemory);
}

// ---- step journal ---------------------------------------------------------------------------

Result<std::optional<StepRecord>> RunStore::GetStep(const StepKey& step) {
  std::lock_guard lock(mutex_);
  return ReadFirst(Select(db_, kStepColumns,
                          "FROM steps WHERE run_id = ? AND iteration = ? AND step = ? AND key = ?",
                          {step.run_id, std::int64_t{step.iteration}, step.step, step.key}),
                   &ReadStep);
}

Result<std::vector<StepRecord>> RunStore::StepsForIteration(std::int64_t run_id, int iteration) {
  std::lock_guard lock(mutex_);
  return ReadAll(
      Select(db_, kStepColumns, "FROM steps WHERE run_id = ? AND iteration = ? ORDER BY id",
             {run_id, std::int64_t{iteration}}),
      &ReadStep);
}

Result<std::vector<StepRecord>> RunStore::UnfinishedSteps(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll(Select(db_, kStepColumns,
                        "FROM steps WHERE run_id = ? AND state = 'started' ORDER BY id", {run_id}),
                 &ReadStep);
}

Result<std::optional<int>> RunStore::LastJournaledIteration(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  Result<SqlStatement> statement =
      Select(db_, "MAX(iteration) AS last_iteration", "FROM steps WHERE run_id = ?", {run_id});
  if (!statement.ok()) return statement.status();
  Result<bool> found = statement->Step();
  if (!found.ok()) return found.status();
  if (!*found) return std::optional<int>();
  RowReader row(*statement, "steps");
  const std::optional<std::int64_t> last = row.OptionalInteger("last_iteration");
  if (!row.ok()) return row.status();
  if (!last) return std::optional<int>();
  return std::optional<int>(static_cast<int>(*last));
}

}  // namespace kernelpro::store
