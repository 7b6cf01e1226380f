// Answers that list messages (list, /dlq, batch claim, batch enqueue), written one message at a
// time: `{"messages":[m1,m2,...]...}` as a BodyStream, so that what an answer holds while its
// client reads is what it keeps in memory by design plus one message and its text, never the
// page's whole text (control characters are written as six-byte escapes, so a page's text can be
// six times its stored size).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/queue_service.hpp"
#include "http/json_codec.hpp"
#include "http/request.hpp"

namespace dlq::http {

// The part of an answer that is not in memory: messages read one at a time, each when its turn
// to be written comes, so each shows its state as of then.
class LaterMessages {
 public:
  virtual ~LaterMessages() = default;
  virtual std::size_t size() const = 0;
  // The message at `position` (0 .. size()-1) as it is now; none when it no longer belongs in
  // the answer (removed, no longer dead, its lease ended): the answer leaves it out.
  virtual boost::asio::awaitable<std::optional<Message>> read(std::size_t position) = 0;
};

// A queue's page fixed by its ids (GET /queues/{q}/messages): a message removed since is left out.
class QueuePage final : public LaterMessages {
 public:
  QueuePage(core::QueueService& service, core::RequestContext ctx, std::string queue,
            std::vector<MessageId> ids);
  std::size_t size() const override { return ids_.size(); }
  boost::asio::awaitable<std::optional<Message>> read(std::size_t position) override;

 private:
  core::QueueService& service_;
  core::RequestContext ctx_;
  std::string queue_;
  std::vector<MessageId> ids_;
};

class MessageListStream final : public BodyStream {
 public:
  // `open`: the text before the first message (`{"messages":[`); the stream closes the array
  // with `]` and then `,"count":<messages written>}` when `with_count`, else `}`.
  struct Shape {
    std::string open;
    bool with_count = true;
    std::string tail;  // more members after count, e.g. `,"next_after_id":42`
  };

  // `held`: messages already in memory, written first, each released once written; then those
  // of `later` (none: nothing more), each read when its turn comes.
  MessageListStream(Shape shape, std::vector<Message> held, MessageView view,
                    const core::Redactor& redactor, std::unique_ptr<LaterMessages> later = nullptr);

  boost::asio::awaitable<std::string> next() override;

 private:
  boost::asio::awaitable<std::optional<Message>> next_message();

  Shape shape_;
  std::vector<Message> held_;
  std::unique_ptr<LaterMessages> later_;
  MessageView view_;
  const core::Redactor& redactor_;
  std::size_t position_ = 0;        // in held_, then in later_
  std::size_t later_position_ = 0;
  std::size_t written_ = 0;
  enum class Stage { open, items, closed } stage_ = Stage::open;
};

// The request's context as a streamed answer keeps it for its later reads: without the client
// watch, which does not outlive the handler.
core::RequestContext context_for_later(core::RequestContext ctx);

// An answer whose body comes from `body`: written whole (with Content-Length, as any other
// answer) when it ends within the first 256 KiB, else streamed from there. Called by the
// handler, so that a fault while the answer starts is still a problem answer.
boost::asio::awaitable<Response> streamed_response(int status, std::shared_ptr<BodyStream> body);

}  // namespace dlq::http
