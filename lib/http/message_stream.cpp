// Message lists written one message at a time.
#include "http/message_stream.hpp"

namespace dlq::http {
namespace {

// Answers up to this size are sent whole, exactly as before streaming existed.
constexpr std::size_t kWholeAnswerBytes = 256 * 1024;

}  // namespace

MessageListStream::MessageListStream(Shape shape, std::vector<Message> messages, MessageView view,
                                     const core::Redactor& redactor)
    : shape_(std::move(shape)), messages_(std::move(messages)), view_(view), redactor_(redactor) {}

MessageListStream::MessageListStream(Shape shape, std::vector<MessageId> ids,
                                     core::QueueService& service, core::RequestContext ctx,
                                     std::string queue, MessageView view)
    : shape_(std::move(shape)),
      ids_(std::move(ids)),
      service_(&service),
      ctx_(std::move(ctx)),
      queue_(std::move(queue)),
      view_(view),
      redactor_(service.redactor()) {
  ctx_.client = nullptr;  // the request's watch does not outlive the handler
}

boost::asio::awaitable<std::optional<Message>> MessageListStream::next_message() {
  if (!service_) {
    if (position_ == messages_.size()) co_return std::nullopt;
    // Moved out, so that the stored form is freed as soon as its text is written.
    co_return std::move(messages_[position_++]);
  }
  while (position_ < ids_.size()) {
    auto found = co_await service_->find(ctx_, queue_, ids_[position_++]);
    if (found) co_return std::move(*found);
  }
  co_return std::nullopt;
}

boost::asio::awaitable<std::string> MessageListStream::next() {
  switch (stage_) {
    case Stage::open:
      stage_ = Stage::items;
      co_return shape_.open;
    case Stage::items:
      if (auto m = co_await next_message()) {
        std::string out = written_++ > 0 ? "," : "";
        append_message(out, *m, view_, redactor_);
        co_return out;
      }
      stage_ = Stage::closed;
      co_return (shape_.with_count ? "],\"count\":" + std::to_string(written_) : std::string("]")) +
          shape_.tail + "}";
    case Stage::closed:
      break;
  }
  co_return std::string();
}

boost::asio::awaitable<Response> streamed_response(int status, std::shared_ptr<BodyStream> body) {
  Response r;
  r.status = status;
  while (r.body.size() < kWholeAnswerBytes) {
    std::string piece = co_await body->next();
    if (piece.empty()) co_return r;
    r.body += piece;
  }
  r.stream = std::move(body);
  co_return r;
}

}  // namespace dlq::http
