// The SQS front's actions in dlq's terms (docs/sqs.md; sqs_queue_actions.cpp and
// sqs_message_actions.cpp): each reads the API's JSON members and
// returns the answer's, or throws SqsError. One mapping for every codec: the JSON 1.0 protocol
// now, the query protocol's form fields and XML next. Private to lib/http.
#pragma once

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include "config/config.hpp"
#include "core/access.hpp"
#include "core/desk.hpp"
#include "core/queue_service.hpp"
#include "core/request_context.hpp"
#include "store/store.hpp"

namespace dlq::http::sqs {

// An SQS error by its name (`QueueDoesNotExist`); status and query code follow from the name
// (error_status, error_code).
class SqsError : public std::runtime_error {
 public:
  SqsError(std::string name, const std::string& message)
      : std::runtime_error(message), name_(std::move(name)) {}
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};
int error_status(std::string_view name);
// The query protocol's code: `AWS.SimpleQueueService.NonExistentQueue` and the like.
std::string error_code(std::string_view name);

// One request to an action: who asks, the queue its path names (POST /{account}/{queue}), and
// the context the core acts in.
struct Call {
  core::Principal who;
  std::optional<std::string> path_queue;
  core::RequestContext ctx;
};

class Actions {
 public:
  Actions(core::QueueService& service, core::DeadLetterDesk& desk, store::Store& store,
          const Config& config);

  // Whether `action` is an SQS action at all, and whether dlq serves it.
  static bool known(std::string_view action);
  static bool served(std::string_view action);
  // The base of queue URLs (sqs.public_url, or http://<address dlqd bound>).
  void set_base_url(std::string url) { base_url_ = std::move(url); }

  boost::asio::awaitable<boost::json::object> run(std::string_view action, const Call& call,
                                                  const boost::json::object& in);

 private:
  using Out = boost::asio::awaitable<boost::json::object>;
  Out create_queue(const Call& call, const boost::json::object& in);
  Out get_queue_url(const Call& call, const boost::json::object& in);
  Out list_queues(const Call& call, const boost::json::object& in);
  Out delete_queue(const Call& call, const boost::json::object& in);
  Out get_queue_attributes(const Call& call, const boost::json::object& in);
  Out set_queue_attributes(const Call& call, const boost::json::object& in);
  Out tag_queue(const Call& call, const boost::json::object& in);
  Out untag_queue(const Call& call, const boost::json::object& in);
  Out list_queue_tags(const Call& call, const boost::json::object& in);
  Out list_dead_letter_source_queues(const Call& call, const boost::json::object& in);
  Out purge_queue(const Call& call, const boost::json::object& in);
  Out send_message(const Call& call, const boost::json::object& in);
  Out send_message_batch(const Call& call, const boost::json::object& in);
  Out receive_message(const Call& call, const boost::json::object& in);
  Out delete_message(const Call& call, const boost::json::object& in);
  Out delete_message_batch(const Call& call, const boost::json::object& in);
  Out change_message_visibility(const Call& call, const boost::json::object& in);
  Out change_message_visibility_batch(const Call& call, const boost::json::object& in);
  Out start_message_move_task(const Call& call, const boost::json::object& in);
  Out cancel_message_move_task(const Call& call, const boost::json::object& in);
  Out list_message_move_tasks(const Call& call, const boost::json::object& in);
  // The registered queues whose RedrivePolicy names `dlq`, in name order after `after`, at most
  // `limit` (+1 to tell whether there are more).
  boost::asio::awaitable<std::vector<std::string>> source_queues(const std::string& dlq,
                                                                 std::optional<std::string> after,
                                                                 std::size_t limit);
  // A move task's SourceArn: a registered queue of this region and account, or
  // ResourceNotFoundException.
  boost::asio::awaitable<std::string> move_source(const boost::json::object& in);

  // Deleting dead letters through their dead-letter queue `dlq` (id, the receive's receipt):
  // dismissed while dead there under that receipt, in one audited batch; others are left alone.
  boost::asio::awaitable<void> dismiss_dead(const Call& call, const std::string& dlq,
                                            std::vector<std::pair<MessageId, std::string>> receipts,
                                            std::string sqs_action);
  // PurgeQueue of a dead-letter queue: every dead letter stamped with it, dismissed in batches.
  boost::asio::awaitable<void> purge_dead(const Call& call, const std::string& dlq);

  // The registry row of the queue a request names (QueueUrl, or the path); QueueDoesNotExist.
  boost::asio::awaitable<store::SqsQueueRow> queue_of(const Call& call,
                                                      const boost::json::object& in);
  std::string queue_url(std::string_view queue) const;
  // A RedrivePolicy among `given` (normalised) must name a registered queue other than `source`
  // whose RedriveAllowPolicy admits `source`: InvalidParameterValue otherwise.
  boost::asio::awaitable<void> check_redrive(const std::string& source,
                                             const std::map<std::string, std::string>& given);
  // A registry change decided by `decide`, which may throw SqsError; the row afterwards.
  boost::asio::awaitable<std::optional<store::SqsQueueRow>> change_queue(
      std::string name, store::DecideSqsQueue decide);
  // A change of an existing queue's row by `edit` (which may throw SqsError); QueueDoesNotExist
  // when it went meanwhile.
  boost::asio::awaitable<std::optional<store::SqsQueueRow>> change_existing(
      std::string name, std::function<void(store::SqsQueueRow&)> edit);

  core::QueueService& service_;
  core::DeadLetterDesk& desk_;
  store::Store& store_;
  const Config& config_;
  std::string base_url_;
};

}  // namespace dlq::http::sqs
