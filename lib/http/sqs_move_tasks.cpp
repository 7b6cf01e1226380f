// SQS message move tasks (issue 39, docs/sqs.md): StartMessageMoveTask, CancelMessageMoveTask and
// ListMessageMoveTasks as the desk's batch replay runs over the dead letters stamped with a
// dead-letter queue. A moved message keeps its MessageId (a replay keeps dlq's id) and its receive
// count starts again.
#include <boost/json.hpp>

#include "http/sqs_actions.hpp"
#include "http/sqs_fields.hpp"
#include "http/sqs_redrive.hpp"

namespace dlq::http::sqs {
namespace json = boost::json;
using boost::asio::awaitable;

namespace {

// What a run's reason says of a task's DestinationArn (runs have no field of their own for it).
constexpr std::string_view kReason = "SQS StartMessageMoveTask";
constexpr std::string_view kReasonTo = "SQS StartMessageMoveTask to ";

// Opaque to clients, as AWS's: base64 of {"taskId", "sourceArn"}.
std::string task_handle(long long run_id, const std::string& source_arn) {
  return base64_encode(json::serialize(
      json::object{{"taskId", std::to_string(run_id)}, {"sourceArn", source_arn}}));
}

struct Handle {
  long long run_id = 0;
  std::string source_arn;
};

std::optional<Handle> decode_handle(const std::string& text) {
  auto raw = base64_decode(text);
  if (!raw) return std::nullopt;
  boost::system::error_code ec;
  json::value doc = json::parse(*raw, ec);
  if (ec || !doc.is_object()) return std::nullopt;
  const auto* id = doc.as_object().if_contains("taskId");
  const auto* arn = doc.as_object().if_contains("sourceArn");
  if (!id || !id->is_string() || !arn || !arn->is_string()) return std::nullopt;
  auto n = parse_int(id->as_string());
  if (!n || *n <= 0) return std::nullopt;
  return Handle{*n, std::string(arn->as_string())};
}

[[noreturn]] void not_found(const std::string& message) {
  fail("ResourceNotFoundException", message);
}

bool running(RunStatus s) {
  return s == RunStatus::scheduled || s == RunStatus::running || s == RunStatus::paused;
}

std::string_view task_status(RunStatus s) {
  if (running(s)) return "RUNNING";
  return s == RunStatus::done ? "COMPLETED" : "CANCELLED";
}

}  // namespace

awaitable<std::string> Actions::move_source(const json::object& in) {
  std::string arn = required_text(in, "SourceArn");
  auto name = arn_queue(config_, arn);
  if (!name || !co_await store_.sqs_queue_find(*name)) {
    not_found("The resource that you specified for the SourceArn parameter doesn't exist.");
  }
  co_return *name;
}

Actions::Out Actions::start_message_move_task(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  std::string dlq = co_await move_source(in);
  if ((co_await source_queues(dlq, std::nullopt, 1)).empty()) {
    invalid("Source queue must be configured as a Dead Letter Queue: no queue's RedrivePolicy "
            "names " + dlq + ".");
  }
  core::MoveTaskRequest task;
  task.dead_letter_queue = dlq;
  if (auto dest = text(in, "DestinationArn")) {
    auto name = arn_queue(config_, *dest);
    if (!name) invalid("DestinationArn must be a queue of this region and account.");
    task.destination_queue = *name;
  }
  // A DestinationArn is kept in the run's reason: the replay-run page and ListMessageMoveTasks
  // show it.
  task.reason = std::string(kReason);
  if (auto dest = text(in, "DestinationArn")) task.reason = std::string(kReasonTo) + *dest;
  if (auto rate = integer(in, "MaxNumberOfMessagesPerSecond")) {
    task.rate_per_second = static_cast<double>(in_range(rate, "MaxNumberOfMessagesPerSecond", 1, 500, 1));
  }
  const std::string arn = queue_arn(config_, dlq);
  task.handle = [arn](long long id) { return task_handle(id, arn); };
  auto run = co_await desk_.start_move_task(call.ctx, std::move(task));
  if (!run) invalid(run.error().message);
  co_return json::object{{"TaskHandle", task_handle(run->id, arn)}};
}

Actions::Out Actions::cancel_message_move_task(const Call& call, const json::object& in) {
  need(call.who, Role::admin);
  auto handle = decode_handle(required_text(in, "TaskHandle"));
  auto dlq = handle ? arn_queue(config_, handle->source_arn) : std::nullopt;
  if (!dlq) not_found("The resource that you specified for the TaskHandle parameter doesn't exist.");
  auto found = co_await desk_.run(call.ctx, handle->run_id);
  store::DeadFilter f;
  f.dead_letter_queue = *dlq;
  if (!found || found->filter != core::canonical_filter(f)) {
    not_found("The resource that you specified for the TaskHandle parameter doesn't exist.");
  }
  auto changed = co_await desk_.change_run(call.ctx, handle->run_id, core::RunAction::cancel);
  if (!changed) not_found("Only active (non-completed) message movement tasks can be cancelled.");
  co_return json::object{{"ApproximateNumberOfMessagesMoved", changed->replayed}};
}

Actions::Out Actions::list_message_move_tasks(const Call& call, const json::object& in) {
  need(call.who, Role::reader);
  std::string dlq = co_await move_source(in);
  int limit = static_cast<int>(in_range(integer(in, "MaxResults"), "MaxResults", 1, 10, 1));
  const std::string arn = queue_arn(config_, dlq);
  json::array results;
  for (const auto& run : co_await desk_.move_tasks(call.ctx, dlq, limit)) {
    json::object r{{"Status", task_status(run.status)},
                   {"SourceArn", arn},
                   {"MaxNumberOfMessagesPerSecond", static_cast<long long>(run.rate_per_second)},
                   {"ApproximateNumberOfMessagesMoved", run.replayed},
                   {"ApproximateNumberOfMessagesToMove", run.matched},
                   {"StartedTimestamp", run.start_at}};
    if (run.reason && run.reason->starts_with(kReasonTo)) {
      r["DestinationArn"] = run.reason->substr(kReasonTo.size());
    }
    if (running(run.status)) r["TaskHandle"] = task_handle(run.id, arn);
    results.push_back(std::move(r));
  }
  co_return json::object{{"Results", std::move(results)}};
}

}  // namespace dlq::http::sqs
