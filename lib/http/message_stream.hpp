// Answers that list messages (list, batch claim, batch enqueue), written one message at a time:
// `{"messages":[m1,m2,...]...}` as a BodyStream, so that what an answer holds while its client
// reads is one message and its text, never the page's whole text (control characters are
// written as six-byte escapes, so a page's text can be six times its stored size).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "core/queue_service.hpp"
#include "http/json_codec.hpp"
#include "http/request.hpp"

namespace dlq::http {

class MessageListStream final : public BodyStream {
 public:
  // `open`: the text before the first message (`{"messages":[`); the stream closes the array
  // with `]` and then `,"count":<messages written>}` when `with_count`, else `}`.
  struct Shape {
    std::string open;
    bool with_count = true;
    std::string tail;  // more members after count, e.g. `,"next_after_id":42`
  };

  // Messages already in memory (claim and batch answers): each is released once written.
  MessageListStream(Shape shape, std::vector<Message> messages, MessageView view,
                    const core::Redactor& redactor);
  // A page fixed by its ids (list answers): each message is read when its turn comes, so it
  // shows its state as of then; one removed since the page was fixed is left out.
  MessageListStream(Shape shape, std::vector<MessageId> ids, core::QueueService& service,
                    core::RequestContext ctx, std::string queue, MessageView view);

  boost::asio::awaitable<std::string> next() override;

 private:
  boost::asio::awaitable<std::optional<Message>> next_message();

  Shape shape_;
  std::vector<Message> messages_;
  std::vector<MessageId> ids_;
  core::QueueService* service_ = nullptr;
  core::RequestContext ctx_;
  std::string queue_;
  MessageView view_;
  const core::Redactor& redactor_;
  std::size_t position_ = 0;
  std::size_t written_ = 0;
  enum class Stage { open, items, closed } stage_ = Stage::open;
};

// An answer whose body comes from `body`: written whole (with Content-Length, as any other
// answer) when it ends within the first 256 KiB, else streamed from there. Called by the
// handler, so that a fault while the answer starts is still a problem answer.
boost::asio::awaitable<Response> streamed_response(int status, std::shared_ptr<BodyStream> body);

}  // namespace dlq::http
