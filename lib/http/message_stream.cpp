// Message lists written one message at a time.
#include "http/message_stream.hpp"

namespace dlq::http {
namespace {

// Answers up to this size are sent whole, exactly as before streaming existed.
constexpr std::size_t kWholeAnswerBytes = 256 * 1024;

}  // namespace

core::RequestContext context_for_later(core::RequestContext ctx) {
  ctx.client = nullptr;
  return ctx;
}

QueuePage::QueuePage(core::QueueService& service, core::RequestContext ctx, std::string queue,
                     std::vector<MessageId> ids)
    : service_(service),
      ctx_(context_for_later(std::move(ctx))),
      queue_(std::move(queue)),
      ids_(std::move(ids)) {}

boost::asio::awaitable<std::optional<Message>> QueuePage::read(std::size_t position) {
  auto found = co_await service_.find(ctx_, queue_, ids_.at(position));
  if (!found) co_return std::nullopt;
  co_return std::move(*found);
}

MessageListStream::MessageListStream(Shape shape, std::vector<Message> held, MessageView view,
                                     const core::Redactor& redactor,
                                     std::unique_ptr<LaterMessages> later)
    : shape_(std::move(shape)),
      held_(std::move(held)),
      later_(std::move(later)),
      view_(view),
      redactor_(redactor) {}

boost::asio::awaitable<std::optional<Message>> MessageListStream::next_message() {
  if (position_ < held_.size()) {
    // Moved out, so that the stored form is freed as soon as its text is written.
    co_return std::move(held_[position_++]);
  }
  while (later_ && later_position_ < later_->size()) {
    auto found = co_await later_->read(later_position_++);
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
