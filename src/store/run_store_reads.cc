// Reading a run store: the RunStore methods that look rows up, each table's rows selected and read
// as its declaration in run_store_tables.h says (through RowReader, by column name). Every method
// takes the store's mutex for its statement only; none writes.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/row_reader.h"
#include "store/run_store.h"
#include "store/run_store_tables.h"

namespace kernelpro::store {

namespace {

// ---- statements: prepared, bound and read ---------------------------------------------------

// "SELECT <columns> FROM <table> <rest>" prepared, with `params` bound.
Result<SqlStatement> Select(SqlDatabase& db, const std::string& columns, const char* table,
                            const char* rest, std::initializer_list<SqlValue> params) {
  Result<SqlStatement> statement =
      db.Prepare("SELECT " + columns + " FROM " + table + " " + std::string(rest));
  if (!statement.ok()) return statement.status();
  if (Status bound = statement->Bind(params); !bound.ok()) return bound;
  return statement;
}

// Runs `statement` (prepared and bound, or why not) and reads every row with `read`, a function
// of the statement that returns Result<Record>.
template <typename Record, typename Read>
Result<std::vector<Record>> ReadAll(Result<SqlStatement> statement, Read read) {
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
template <typename Record, typename Read>
Result<std::optional<Record>> ReadFirst(Result<SqlStatement> statement, Read read) {
  if (!statement.ok()) return statement.status();
  Result<bool> row = statement->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Record>();
  Result<Record> record = read(*statement);
  if (!record.ok()) return record.status();
  return std::optional<Record>(std::move(*record));
}

// The rows of `table` that `rest` ("WHERE ... ORDER BY ...") selects, every column read.
template <typename Record>
Result<std::vector<Record>> SelectAll(SqlDatabase& db, const Table<Record>& table, const char* rest,
                                      std::initializer_list<SqlValue> params) {
  return ReadAll<Record>(Select(db, SelectList(table), table.name, rest, params),
                         [&](const SqlStatement& statement) { return ReadRow(table, statement); });
}

// The first of them, if any.
template <typename Record>
Result<std::optional<Record>> SelectFirst(SqlDatabase& db, const Table<Record>& table,
                                          const char* rest,
                                          std::initializer_list<SqlValue> params) {
  return ReadFirst<Record>(
      Select(db, SelectList(table), table.name, rest, params),
      [&](const SqlStatement& statement) { return ReadRow(table, statement); });
}

// The record a lookup by id found; NotFound with `missing` when there was none.
template <typename Record>
Result<Record> Found(Result<std::optional<Record>> record, const std::string& missing) {
  if (!record.ok()) return record.status();
  if (!*record) return Status::NotFound(missing);
  return std::move(**record);
}

// ---- LLM totals: sums, not rows of a table --------------------------------------------------

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
  RowReader row(statement, kLlmExchangesTable.name);
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
  RowReader row(statement, kLlmExchangesTable.name);
  totals->iteration = row.Int("iteration");
  if (!row.ok()) return row.status();
  return totals;
}

}  // namespace

// ---- runs -----------------------------------------------------------------------------------

Result<RunRecord> RunStore::GetRun(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return Found(SelectFirst(db_, kRunsTable, "WHERE id = ?", {run_id}),
               "no run " + std::to_string(run_id) + " in " + path_);
}

Result<std::vector<RunRecord>> RunStore::ListRuns() {
  std::lock_guard lock(mutex_);
  return SelectAll(db_, kRunsTable, "ORDER BY id", {});
}

// ---- candidates -----------------------------------------------------------------------------

Result<CandidateRecord> RunStore::GetCandidate(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return Found(SelectFirst(db_, kCandidatesTable, "WHERE id = ?", {candidate_id}),
               "no candidate " + std::to_string(candidate_id));
}

Result<std::optional<CandidateRecord>> RunStore::FindCandidateByHash(std::int64_t run_id,
                                                                     const std::string& sha256) {
  std::lock_guard lock(mutex_);
  return SelectFirst(db_, kCandidatesTable, "WHERE run_id = ? AND sha256 = ?", {run_id, sha256});
}

// ---- nodes ----------------------------------------------------------------------------------

Result<NodeRecord> RunStore::GetNode(std::int64_t node_id) {
  std::lock_guard lock(mutex_);
  return Found(SelectFirst(db_, kNodesTable, "WHERE id = ?", {node_id}),
               "no node " + std::to_string(node_id));
}

Result<std::vector<NodeRecord>> RunStore::ListNodes(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return SelectAll(db_, kNodesTable, "WHERE run_id = ? ORDER BY id", {run_id});
}

Result<std::optional<NodeRecord>> RunStore::BestCorrectNode(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return SelectFirst(db_, kNodesTable,
                     "WHERE run_id = ? AND status = 'correct' AND speedup IS NOT NULL "
                     "ORDER BY speedup DESC, id ASC LIMIT 1",
                     {run_id});
}

// ---- what was learnt about a candidate ------------------------------------------------------

// The latest is the last written.
constexpr const char* kLatestOfCandidate = "WHERE candidate_id = ? ORDER BY id DESC LIMIT 1";

Result<std::optional<EvaluationRecord>> RunStore::LatestEvaluation(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return SelectFirst(db_, kEvaluationsTable, kLatestOfCandidate, {candidate_id});
}

Result<std::optional<MetricsRecord>> RunStore::LatestMetrics(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return SelectFirst(db_, kMetricsTable, kLatestOfCandidate, {candidate_id});
}

Result<std::optional<ToolOutputRecord>> RunStore::LatestToolOutput(std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return SelectFirst(db_, kToolOutputsTable, kLatestOfCandidate, {candidate_id});
}

Result<std::optional<ProfileAnalysisRecord>> RunStore::LatestProfileAnalysis(
    std::int64_t candidate_id) {
  std::lock_guard lock(mutex_);
  return SelectFirst(db_, kProfileAnalysesTable, kLatestOfCandidate, {candidate_id});
}

// ---- LLM exchanges --------------------------------------------------------------------------

Result<std::vector<LlmExchangeRecord>> RunStore::ListLlmExchanges(std::int64_t run_id,
                                                                  std::optional<int> iteration) {
  std::lock_guard lock(mutex_);
  const SqlValue wanted = iteration ? SqlValue(std::int64_t{*iteration}) : SqlValue(nullptr);
  return SelectAll(db_, kLlmExchangesTable,
                   "WHERE run_id = ?1 AND (?2 IS NULL OR iteration = ?2) ORDER BY id",
                   {run_id, wanted});
}

Result<std::vector<LlmExchangeRecord>> RunStore::ListLlmExchangesForStep(const StepKey& step) {
  std::lock_guard lock(mutex_);
  return SelectAll(db_, kLlmExchangesTable,
                   "WHERE run_id = ? AND iteration = ? AND step_key = ? ORDER BY id",
                   {step.run_id, std::int64_t{step.iteration}, StepKeyText(step)});
}

Result<LlmTotals> RunStore::LlmTotalsForRun(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  Result<std::optional<LlmTotals>> totals = ReadFirst<LlmTotals>(
      Select(db_, kLlmTotalsColumns, kLlmExchangesTable.name, "WHERE run_id = ?", {run_id}),
      &ReadLlmTotals);
  if (!totals.ok()) return totals.status();
  return totals->value_or(LlmTotals{});
}

Result<std::vector<LlmTotals>> RunStore::LlmTotalsByIteration(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return ReadAll<LlmTotals>(
      Select(db_, std::string(kLlmTotalsColumns) + ", iteration", kLlmExchangesTable.name,
             "WHERE run_id = ? GROUP BY iteration ORDER BY iteration", {run_id}),
      &ReadLlmTotalsWithIteration);
}

// ---- memory ---------------------------------------------------------------------------------

Result<std::vector<MemoryRecord>> RunStore::ListMemoryEntries(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return SelectAll(db_, kMemoryEntriesTable, "WHERE run_id = ? ORDER BY id", {run_id});
}

// ---- step journal ---------------------------------------------------------------------------

Result<std::optional<StepRecord>> RunStore::GetStep(const StepKey& step) {
  std::lock_guard lock(mutex_);
  return SelectFirst(db_, kStepsTable,
                     "WHERE run_id = ? AND iteration = ? AND step = ? AND key = ?",
                     {step.run_id, std::int64_t{step.iteration}, step.step, step.key});
}

Result<std::vector<StepRecord>> RunStore::StepsForIteration(std::int64_t run_id, int iteration) {
  std::lock_guard lock(mutex_);
  return SelectAll(db_, kStepsTable, "WHERE run_id = ? AND iteration = ? ORDER BY id",
                   {run_id, std::int64_t{iteration}});
}

Result<std::vector<StepRecord>> RunStore::UnfinishedSteps(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  return SelectAll(db_, kStepsTable, "WHERE run_id = ? AND state = 'started' ORDER BY id",
                   {run_id});
}

Result<std::optional<int>> RunStore::LastJournaledIteration(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  Result<SqlStatement> statement = Select(db_, "MAX(iteration) AS last_iteration", kStepsTable.name,
                                          "WHERE run_id = ?", {run_id});
  if (!statement.ok()) return statement.status();
  Result<bool> found = statement->Step();
  if (!found.ok()) return found.status();
  if (!*found) return std::optional<int>();
  RowReader row(*statement, kStepsTable.name);
  const std::optional<std::int64_t> last = row.OptionalInteger("last_iteration");
  if (!row.ok()) return row.status();
  if (!last) return std::optional<int>();
  return std::optional<int>(static_cast<int>(*last));
}

}  // namespace kernelpro::store
