#include "http/connection.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstring>
#include <exception>

#include "common/log.h"
#include "http/body_stream.h"

namespace gpumon::http {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using tcp = asio::ip::tcp;

constexpr size_t kInitialBuffer = 4096;
constexpr size_t kBodyReadSize = 64 * 1024;
// While a handler runs, read at most this far ahead (pipelined requests,
// or a hang-up to notice); beyond it reading pauses.
constexpr size_t kReadAheadLimit = 64 * 1024;
// A buffer grown past this for one large request is released afterwards.
constexpr size_t kShrinkAbove = 16 * 1024;
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr size_t kMaxLingerBytes = 1024 * 1024;

std::string FormatEndpoint(const tcp::endpoint& ep) {
  const std::string port = std::to_string(ep.port());
  if (ep.address().is_v6()) return "[" + ep.address().to_string() + "]:" + port;
  return ep.address().to_string() + ":" + port;
}

std::string_view ErrorTypeFor(int status) {
  switch (status) {
    case 404:
      return "not_found";
    case 408:
      return "timeout";
    case 500:
      return "internal";
    case 503:
      return "unavailable";
    default:
      return "bad_data";
  }
}

// Exception text for one log line: control characters escaped.
std::string OneLine(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Runs a handler; an exception becomes a generic 500 (its text goes to the
// log only: it may hold internals, and never belongs in a header).
HttpResponse Invoke(const Route& route, const HttpRequest& req) {
  HttpResponse res;
  try {
    route.handler(req, res);
    return res;
  } catch (const std::exception& e) {
    LogError("http: handler for " + req.method + " " + req.path + " threw: " + OneLine(e.what()));
  } catch (...) {
    LogError("http: handler for " + req.method + " " + req.path + " threw a non-exception");
  }
  HttpResponse err;
  SetJsonError(err, 500, "internal", "internal server error");
  return err;
}

// Reports a handled request to ServerOptions::observe_request, if set.
class RequestTimer {
 public:
  RequestTimer(const ServerOptions& options, const Route& route)
      : observe_(&options.observe_request),
        route_(&route),
        start_(std::chrono::steady_clock::now()) {}
  void Done(int status) const {
    if (!*observe_) return;
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
    (*observe_)(route_->pattern, status, took.count());
  }

 private:
  const std::function<void(std::string_view, int, double)>* observe_;
  const Route* route_;
  std::chrono::steady_clock::time_point start_;
};

void RunProducer(const BodyProducer& producer, StreamState& state, const std::string& what) {
  bool ok = false;
  try {
    ok = producer([&state](const char* data, size_t size) { return state.Write(data, size); });
  } catch (const std::exception& e) {
    LogError("http: response stream for " + what + " threw: " + OneLine(e.what()));
  } catch (...) {
    LogError("http: response stream for " + what + " threw a non-exception");
  }
  state.Finish(ok);
}

DecoderLimits LimitsFor(const ServerLimits& l) {
  DecoderLimits d;
  d.max_request_line_bytes = l.max_request_line_bytes;
  d.max_header_bytes = l.max_header_bytes;
  d.max_header_fields = l.max_header_fields;
  return d;
}

}  // namespace

Connection::Connection(ServerCore* core, Socket socket)
    : core_(core),
      socket_(std::move(socket)),
      ex_(socket_.get_executor()),
      read_timer_(ex_),
      write_timer_(ex_),
      decoder_(LimitsFor(core->options.limits)) {
  error_code ec;
  const tcp::endpoint ep = socket_.remote_endpoint(ec);
  if (!ec) remote_address_ = FormatEndpoint(ep);
  socket_.set_option(tcp::no_delay(true), ec);
  if (core_->tls) tls_ = std::make_unique<asio::ssl::stream<Socket&>>(socket_, *core_->tls);
}

Connection::~Connection() {
  if (stream_) stream_->MarkDead();
  if (phase_ != Phase::kClosed) core_->Unregister(this);
}

void Connection::Start() {
  asio::post(ex_, [self = shared_from_this()] {
    if (self->phase_ == Phase::kClosed) return;
    if (self->stopping_) {
      self->Close();
      return;
    }
    if (!self->tls_) {
      self->EnterReadHead();
      return;
    }
    self->phase_ = Phase::kHandshake;
    self->ArmRead(Deadline::kHandshake, self->core_->options.limits.header_timeout);
    self->tls_->async_handshake(asio::ssl::stream_base::server, [self](const error_code& ec) {
      if (self->phase_ == Phase::kClosed) return;
      if (ec) {
        self->Close();
        return;
      }
      self->EnterReadHead();
    });
  });
}

void Connection::BeginStop() {
  asio::post(ex_, [self = shared_from_this()] {
    self->stopping_ = true;
    if (self->cancel_) self->cancel_->Cancel();
    switch (self->phase_) {
      case Phase::kHandler:
      case Phase::kRespond:
        self->close_after_ = true;
        break;
      case Phase::kLinger:
      case Phase::kClosed:
        break;
      default:
        self->Close();
    }
  });
}

void Connection::ForceClose() {
  asio::post(ex_, [self = shared_from_this()] { self->Close(); });
}

// ---- Reading ----

bool Connection::EnsureSpace(size_t min_free) {
  const ServerLimits& l = core_->options.limits;
  // Enough for the largest head the decoder accepts plus one byte (so it
  // can tell "too large"), and for a chunk line or trailer section.
  const size_t limit = std::max(l.max_header_bytes, kBodyReadSize) + 1;
  if (start_ > 0 && cap_ - end_ < min_free) {
    std::memmove(buf_.get(), buf_.get() + start_, Buffered());
    end_ -= start_;
    start_ = 0;
  }
  if (cap_ - end_ < min_free && cap_ < limit) {
    const size_t want = std::min(limit, std::max({cap_ * 2, kInitialBuffer, end_ + min_free}));
    auto bigger = std::make_unique<char[]>(want);
    if (end_ > 0) std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    cap_ = want;
  }
  return cap_ > end_;
}

void Connection::MaybeRead() {
  if (reading_ || peer_eof_) return;
  switch (phase_) {
    case Phase::kClosed:
    case Phase::kHandshake:
      return;
    case Phase::kAuthorize:
    case Phase::kHandler:
    case Phase::kRespond:
      if (Buffered() >= kReadAheadLimit) return;
      break;
    case Phase::kLinger:
      start_ = end_ = 0;  // nothing in it matters any more
      break;
    default:
      break;
  }
  if (!EnsureSpace(phase_ == Phase::kReadBody ? kBodyReadSize : kInitialBuffer / 2)) return;
  reading_ = true;
  const auto buf = asio::buffer(buf_.get() + end_, cap_ - end_);
  auto handler = [self = shared_from_this()](const error_code& ec, size_t n) {
    self->OnRead(ec, n);
  };
  if (tls_ && phase_ != Phase::kLinger) {
    tls_->async_read_some(buf, std::move(handler));
  } else {
    socket_.async_read_some(buf, std::move(handler));
  }
}

void Connection::OnRead(const error_code& ec, size_t n) {
  reading_ = false;
  if (phase_ == Phase::kClosed) return;
  if (phase_ == Phase::kLinger) {
    lingered_bytes_ += n;
    if (tls_ && !tls_shutdown_started_ && (!ec || ec == asio::error::operation_aborted)) {
      LingerClose();  // the read-ahead is out of the way: shut TLS down now
    } else if (ec || lingered_bytes_ > kMaxLingerBytes) {
      Close();
    } else {
      MaybeRead();
    }
    return;
  }
  if (ec) {
    OnPeerGone(ec == asio::error::eof || ec == asio::ssl::error::stream_truncated);
    return;
  }
  end_ += n;
  if (phase_ == Phase::kReadHead || phase_ == Phase::kReadBody) {
    Process();
  } else {
    MaybeRead();
  }
}

void Connection::OnPeerGone(bool clean_eof) {
  if (phase_ != Phase::kHandler && phase_ != Phase::kRespond) {
    Close();
    return;
  }
  if (cancel_ && !cancel_->cancelled()) {
    cancel_->Cancel();
    core_->canceled_requests.fetch_add(1, std::memory_order_relaxed);
  }
  if (!clean_eof) {
    Close();
    return;
  }
  // A half-close may still want the answer: write it, then close.
  peer_eof_ = true;
  close_after_ = true;
}

// ---- The per-request steps ----

void Connection::EnterReadHead() {
  phase_ = Phase::kReadHead;
  decoder_.Reset();
  route_ = nullptr;
  captures_.clear();
  cancel_.reset();
  close_after_ = false;
  head_request_ = false;
  http10_ = false;
  keep_alive_ = true;
  if (Buffered() == 0 && cap_ > kShrinkAbove && !reading_) {
    buf_.reset();
    cap_ = start_ = end_ = 0;
  }
  const ServerLimits& l = core_->options.limits;
  if (Buffered() > 0) {
    ArmRead(Deadline::kHeader, l.header_timeout);
  } else {
    ArmRead(Deadline::kIdle, l.idle_timeout);
  }
  Process();
}

void Connection::Process() {
  while (phase_ == Phase::kReadHead || phase_ == Phase::kReadBody) {
    size_t used = 0;
    const RequestDecoder::Stage st =
        decoder_.Feed(buf_ ? buf_.get() + start_ : nullptr, Buffered(), &used);
    start_ += used;
    // Rewind an emptied buffer, but never under a read in flight: it writes
    // at the old end_, and OnRead() adds its bytes there.
    if (start_ == end_ && !reading_) start_ = end_ = 0;
    switch (st) {
      case RequestDecoder::Stage::kNeedMore:
        if (phase_ == Phase::kReadHead && deadline_ == Deadline::kIdle && decoder_.started()) {
          ArmRead(Deadline::kHeader, core_->options.limits.header_timeout);
        }
        MaybeRead();
        return;
      case RequestDecoder::Stage::kHeadReady:
        OnHead();
        break;
      case RequestDecoder::Stage::kComplete:
        OnComplete();
        return;
      case RequestDecoder::Stage::kError:
        RespondError(decoder_.error_status(), ErrorTypeFor(decoder_.error_status()),
                     decoder_.error_message(), true);
        return;
    }
  }
}

void Connection::OnHead() {
  HttpRequest& req = decoder_.request();
  core_->requests.fetch_add(1, std::memory_order_relaxed);
  req.remote_address = remote_address_;
  head_request_ = req.method == "HEAD";
  http10_ = req.version_minor == 0;
  keep_alive_ = decoder_.keep_alive();

  if (core_->options.authorize) {
    Authorization a = Authorize(req, false);
    if (a.verdict == Authorization::Verdict::kDefer) {
      // The slow check runs on the authorization thread; the head stays in
      // the decoder, which nobody feeds meanwhile (phase kAuthorize).
      phase_ = Phase::kAuthorize;
      CancelRead();
      auto self = shared_from_this();
      if (!core_->auth_pool.TryPost([self] {
            Authorization slow = self->Authorize(self->decoder_.request(), true);
            asio::post(self->ex_, [self, slow = std::move(slow)]() mutable {
              self->OnAuthorized(std::move(slow));
            });
          })) {
        phase_ = Phase::kReadHead;
        RespondError(503, "unavailable", "server overloaded: too many pending authentications",
                     true);
      }
      return;
    }
    if (a.verdict == Authorization::Verdict::kDeny) {
      Refuse(std::move(a.refusal));
      return;
    }
  }
  RouteHead();
}

Authorization Connection::Authorize(const HttpRequest& head, bool may_block) {
  Authorization a;
  try {
    a = core_->options.authorize(head, may_block);
  } catch (const std::exception& e) {
    LogError(std::string("http: authorize threw: ") + OneLine(e.what()));
    a.verdict = Authorization::Verdict::kDeny;
    a.refusal = HttpResponse();
    SetJsonError(a.refusal, 500, "internal", "internal server error");
  }
  if (may_block && a.verdict == Authorization::Verdict::kDefer) {
    a.verdict = Authorization::Verdict::kDeny;
    a.refusal = HttpResponse();
    SetJsonError(a.refusal, 500, "internal", "internal server error");
  }
  return a;
}

void Connection::OnAuthorized(Authorization a) {
  if (phase_ != Phase::kAuthorize) return;  // closed meanwhile
  phase_ = Phase::kReadHead;
  if (a.verdict != Authorization::Verdict::kAllow) {
    Refuse(std::move(a.refusal));
    return;
  }
  RouteHead();
  Process();  // body bytes already buffered, or the request is complete
}

void Connection::Refuse(HttpResponse refusal) {
  core_->rejected_requests.fetch_add(1, std::memory_order_relaxed);
  StartResponse(std::move(refusal), nullptr, true);
}

void Connection::RouteHead() {
  HttpRequest& req = decoder_.request();
  const bool has_body = decoder_.has_body();
  Router::Match match = core_->router.Find(req.method, req.path);
  if (match.kind == Router::MatchKind::kNotFound) {
    RespondError(404, "not_found", "not found", has_body);
    return;
  }
  if (match.kind == Router::MatchKind::kMethodNotAllowed) {
    RespondError(405, "bad_data", "method not allowed", has_body, std::move(match.allow));
    return;
  }
  route_ = match.route;
  captures_ = std::move(match.captures);

  const size_t limit =
      route_->options.max_body_bytes.value_or(core_->options.limits.max_body_bytes);
  const RequestDecoder::Stage st = decoder_.BeginBody(limit);
  if (st == RequestDecoder::Stage::kError) {
    RespondError(decoder_.error_status(), ErrorTypeFor(decoder_.error_status()),
                 decoder_.error_message(), true);
    return;
  }
  if (st == RequestDecoder::Stage::kComplete) return;  // Process() goes on to OnComplete()
  phase_ = Phase::kReadBody;
  ArmRead(Deadline::kBody, core_->options.limits.body_timeout);
  if (decoder_.expects_continue()) {
    Send("HTTP/1.1 100 Continue\r\n\r\n");
    Flush();
  }
}

void Connection::OnComplete() {
  CancelRead();
  phase_ = Phase::kHandler;
  auto req = std::make_shared<HttpRequest>(std::move(decoder_.request()));
  req->captures = std::move(captures_);
  cancel_ = req->cancel;
  if (stopping_) cancel_->Cancel();
  Dispatch(std::move(req));
  MaybeRead();  // notice a hang-up while the handler runs
}

std::shared_ptr<StreamState> Connection::MakeStream() {
  const ServerLimits& l = core_->options.limits;
  return std::make_shared<StreamState>(l.stream_high_water_bytes, l.write_timeout,
                                       [w = weak_from_this(), ex = ex_] {
                                         asio::post(ex, [w] {
                                           if (auto c = w.lock()) c->Pump();
                                         });
                                       });
}

void Connection::Dispatch(std::shared_ptr<HttpRequest> req) {
  const Route* route = route_;
  const bool head = head_request_;
  const std::string what = req->method + " " + req->path;
  const RequestTimer timer(core_->options, *route);
  if (route->options.run_inline) {
    HttpResponse res = Invoke(*route, *req);
    const int status = res.status;
    if (!res.stream || head) {
      StartResponse(std::move(res), nullptr, false);
      timer.Done(status);
      return;
    }
    // The producer may block on back-pressure: never on this thread.
    auto state = MakeStream();
    BodyProducer producer = std::move(res.stream);
    res.stream = nullptr;
    StartResponse(std::move(res), state, false);
    if (!core_->pool.TryPost([state, producer = std::move(producer), what, timer, status] {
          RunProducer(producer, *state, what);
          timer.Done(status);
        })) {
      state->Finish(false);
      timer.Done(status);
    }
    return;
  }
  auto self = shared_from_this();
  const bool posted = core_->pool.TryPost([self, req, route, head, what, timer] {
    HttpResponse res = Invoke(*route, *req);
    const int status = res.status;
    if (!res.stream || head) {
      asio::post(self->ex_, [self, res = std::move(res)]() mutable {
        self->StartResponse(std::move(res), nullptr, false);
      });
      timer.Done(status);
      return;
    }
    auto state = self->MakeStream();
    BodyProducer producer = std::move(res.stream);
    res.stream = nullptr;
    asio::post(self->ex_, [self, res = std::move(res), state]() mutable {
      self->StartResponse(std::move(res), state, false);
    });
    RunProducer(producer, *state, what);
    timer.Done(status);
  });
  if (!posted)
    RespondError(503, "unavailable", "server overloaded: too many queued requests", false);
}

void Connection::RespondError(int status, std::string_view type, std::string_view message,
                              bool close, std::string allow) {
  core_->rejected_requests.fetch_add(1, std::memory_order_relaxed);
  HttpResponse res;
  SetJsonError(res, status, type, message);
  if (!allow.empty()) res.SetHeader("Allow", std::move(allow));
  StartResponse(std::move(res), nullptr, close);
}

void Connection::StartResponse(HttpResponse res, std::shared_ptr<StreamState> stream,
                               bool force_close) {
  if (phase_ == Phase::kClosed || phase_ == Phase::kLinger) {
    if (stream) stream->MarkDead();
    return;
  }
  CancelRead();
  phase_ = Phase::kRespond;
  bool keep = keep_alive_ && !force_close && !res.close_connection && !stopping_ && !peer_eof_ &&
              !close_after_;
  const bool streamed = stream != nullptr || static_cast<bool>(res.stream);
  BodyFraming framing = BodyFraming::kLength;
  size_t length = 0;
  if (StatusForbidsBody(res.status)) {
    framing = BodyFraming::kNone;
  } else if (streamed) {
    framing = http10_ ? BodyFraming::kClose : BodyFraming::kChunked;
    if (http10_) keep = false;
  } else {
    length = res.body.size();
  }
  close_after_ = !keep;
  Send(SerializeHead(res, core_->options.default_headers, framing, length, keep, http10_));
  if (framing == BodyFraming::kLength && !head_request_ && !res.body.empty()) {
    Send(std::move(res.body));
  }
  if (stream && (framing == BodyFraming::kNone || head_request_)) {
    stream->MarkDead();
    stream.reset();
  }
  stream_ = std::move(stream);
  stream_chunked_ = framing == BodyFraming::kChunked;
  stream_done_ = false;
  Flush();
  if (stream_) Pump();
}

void Connection::FinishResponse() {
  stream_.reset();
  stream_done_ = false;
  if (close_after_ || stopping_ || peer_eof_) {
    LingerClose();
    return;
  }
  EnterReadHead();
}

// ---- Writing ----

void Connection::Send(std::string data) { out_.push_back(std::move(data)); }

void Connection::Flush() {
  if (writing_ || out_.empty() || phase_ == Phase::kClosed) return;
  in_flight_.swap(out_);
  out_.clear();
  in_flight_stream_bytes_ = out_stream_bytes_;
  out_stream_bytes_ = 0;
  std::vector<asio::const_buffer> bufs;
  bufs.reserve(in_flight_.size());
  for (const std::string& s : in_flight_) bufs.emplace_back(s.data(), s.size());
  writing_ = true;
  const uint64_t gen = ++write_gen_;
  write_timer_.expires_after(core_->options.limits.write_timeout);
  write_timer_.async_wait([self = shared_from_this(), gen](const error_code& ec) {
    if (ec || gen != self->write_gen_ || self->phase_ == Phase::kClosed) return;
    self->core_->timeouts.fetch_add(1, std::memory_order_relaxed);
    self->Close();
  });
  auto handler = [self = shared_from_this()](const error_code& ec, size_t) { self->OnWritten(ec); };
  if (tls_) {
    asio::async_write(*tls_, bufs, std::move(handler));
  } else {
    asio::async_write(socket_, bufs, std::move(handler));
  }
}

void Connection::OnWritten(const error_code& ec) {
  writing_ = false;
  ++write_gen_;
  write_timer_.cancel();
  if (phase_ == Phase::kClosed) return;
  in_flight_.clear();
  if (stream_ && in_flight_stream_bytes_ > 0) stream_->Release(in_flight_stream_bytes_);
  in_flight_stream_bytes_ = 0;
  if (ec) {
    Close();
    return;
  }
  if (!out_.empty()) {
    Flush();
    return;
  }
  if (phase_ != Phase::kRespond) return;  // e.g. "100 Continue" while the body arrives
  if (stream_ && !stream_done_) {
    Pump();
    return;
  }
  FinishResponse();
}

void Connection::Pump() {
  if (phase_ != Phase::kRespond || !stream_ || stream_done_) return;
  StreamState::Taken t = stream_->Take();
  if (t.dead || t.aborted) {
    Close();  // the client sees a truncated message, never a wrong one
    return;
  }
  if (t.bytes > 0) {
    if (stream_chunked_) Send(ChunkLine(t.bytes));
    for (std::string& p : t.pieces) Send(std::move(p));
    if (stream_chunked_) Send("\r\n");
    out_stream_bytes_ += t.bytes;
  }
  if (t.finished) {
    if (stream_chunked_) Send(kLastChunk);
    stream_done_ = true;
  }
  Flush();
  if (!writing_ && stream_done_) FinishResponse();
}

// ---- Deadlines and closing ----

void Connection::ArmRead(Deadline kind, std::chrono::milliseconds after) {
  deadline_ = kind;
  const uint64_t gen = ++read_gen_;
  read_timer_.expires_after(after);
  read_timer_.async_wait([self = shared_from_this(), gen](const error_code& ec) {
    if (ec || gen != self->read_gen_ || self->phase_ == Phase::kClosed) return;
    self->OnReadDeadline();
  });
}

void Connection::CancelRead() {
  deadline_ = Deadline::kNone;
  ++read_gen_;
  read_timer_.cancel();
}

void Connection::OnReadDeadline() {
  const Deadline kind = deadline_;
  deadline_ = Deadline::kNone;
  if (kind != Deadline::kLinger) core_->timeouts.fetch_add(1, std::memory_order_relaxed);
  if ((kind == Deadline::kHeader || kind == Deadline::kBody) &&
      (phase_ == Phase::kReadHead || phase_ == Phase::kReadBody)) {
    RespondError(408, "timeout",
                 kind == Deadline::kHeader ? "timed out reading the request header"
                                           : "timed out reading the request body",
                 true);
    return;
  }
  Close();
}

void Connection::LingerClose() {
  if (phase_ == Phase::kClosed) return;
  if (peer_eof_) {
    Close();
    return;
  }
  if (phase_ != Phase::kLinger) {
    phase_ = Phase::kLinger;
    cancel_.reset();
    ArmRead(Deadline::kLinger, kLingerTime);
  }
  if (tls_ && !tls_shutdown_started_) {
    // close_notify tells a TLS client the end is deliberate. The engine
    // cannot shut down under a pending read: cancel it, and come back here
    // from its completion.
    if (reading_) {
      error_code ec;
      socket_.cancel(ec);
      return;
    }
    tls_shutdown_started_ = true;
    tls_->async_shutdown([self = shared_from_this()](const error_code&) { self->Close(); });
    return;
  }
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  if (ec) {
    Close();
    return;
  }
  MaybeRead();
}

void Connection::Close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  if (cancel_) cancel_->Cancel();
  CancelRead();
  ++write_gen_;
  write_timer_.cancel();
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  if (stream_) {
    stream_->MarkDead();
    stream_.reset();
  }
  // Buffers stay until destruction: an aborted operation may still
  // reference them until its handler has run.
  core_->Unregister(this);
}

}  // namespace gpumon::http
