#include "http/request_decoder.h"

#include <algorithm>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <limits>
#include <string_view>
#include <utility>

namespace gpumon::http {
namespace {

namespace bhttp = boost::beast::http;
using boost::beast::error_code;

bool IsOws(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsOws(s.back())) s.remove_suffix(1);
  return s;
}

// Splits a comma-separated field value into its non-empty, trimmed
// elements (RFC 9110 5.6.1).
std::vector<std::string_view> SplitList(std::string_view value) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t comma = value.find(',');
    const std::string_view item = Trim(value.substr(0, comma));
    if (!item.empty()) out.push_back(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Beast's parser is not reusable and wants enough stack space for its
// state only; one per request is a small heap object.
constexpr size_t kMinBodyLineCap = 4096;

}  // namespace

class RequestDecoder::Parser : public bhttp::basic_parser<true> {
 public:
  explicit Parser(RequestDecoder* owner) : owner_(owner) {}

 private:
  void on_request_impl(bhttp::verb, boost::beast::string_view method,
                       boost::beast::string_view target, int version, error_code&) override {
    HttpRequest& r = owner_->request_;
    r.method.assign(method.data(), method.size());
    r.target.assign(target.data(), target.size());
    r.version_major = version / 10;
    r.version_minor = version % 10;
  }
  void on_response_impl(int, boost::beast::string_view, int, error_code& ec) override {
    ec = bhttp::error::bad_version;
  }
  void on_field_impl(bhttp::field, boost::beast::string_view name, boost::beast::string_view value,
                     error_code&) override {
    // Fields after the head are chunked trailers: framing is settled by
    // then and no handler reads them, so they are dropped.
    if (owner_->head_done_) return;
    owner_->request_.headers.Add(std::string(name.data(), name.size()),
                                 std::string(value.data(), value.size()));
  }
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
    // Reserve for small bodies only: an announced length costs nothing to
    // send, so it must not make us allocate up front.
    if (length) owner_->request_.body.reserve(std::min<uint64_t>(*length, 64 * 1024));
  }
  size_t on_body_impl(boost::beast::string_view body, error_code&) override {
    owner_->request_.body.append(body.data(), body.size());
    return body.size();
  }
  void on_chunk_header_impl(std::uint64_t size, boost::beast::string_view,
                            error_code& ec) override {
    const size_t have = owner_->request_.body.size();
    if (size > owner_->body_limit_ - std::min(have, owner_->body_limit_)) {
      owner_->pending_status_ = 413;
      owner_->pending_message_ = "request body too large";
      ec = bhttp::error::body_limit;
    }
  }
  size_t on_chunk_body_impl(std::uint64_t, boost::beast::string_view body, error_code&) override {
    owner_->request_.body.append(body.data(), body.size());
    return body.size();
  }
  void on_finish_impl(error_code&) override {}

  RequestDecoder* owner_;
};

RequestDecoder::RequestDecoder(DecoderLimits limits) : limits_(limits) { Reset(); }

RequestDecoder::~RequestDecoder() = default;

void RequestDecoder::Reset() {
  parser_ = std::make_unique<Parser>(this);
  // The head is handed over only once complete and already bounded by our
  // own scan; Beast's limit just needs to stay out of the way.
  const size_t header_limit =
      std::min<size_t>(limits_.max_header_bytes + 8, std::numeric_limits<uint32_t>::max());
  parser_->header_limit(static_cast<uint32_t>(header_limit));
  parser_->body_limit(boost::none);  // checked here, per route
  parser_->eager(false);
  stage_ = Stage::kNeedMore;
  request_ = HttpRequest();
  started_ = false;
  scan_pos_ = 0;
  line_start_ = 0;
  fields_ = 0;
  line_done_ = false;
  head_done_ = false;
  keep_alive_ = true;
  expects_continue_ = false;
  chunked_ = false;
  content_length_.reset();
  body_limit_ = 0;
  error_status_ = 0;
  error_message_.clear();
  pending_status_ = 0;
  pending_message_.clear();
}

RequestDecoder::Stage RequestDecoder::Fail(int status, std::string message) {
  stage_ = Stage::kError;
  error_status_ = status;
  error_message_ = std::move(message);
  return stage_;
}

RequestDecoder::Stage RequestDecoder::Feed(const char* data, size_t size, size_t* consumed) {
  *consumed = 0;
  switch (stage_) {
    case Stage::kError:
    case Stage::kComplete:
    case Stage::kHeadReady:  // waiting for BeginBody()
      return stage_;
    case Stage::kNeedMore:
      break;
  }
  if (!head_done_) return FeedHead(data, size, consumed);
  return FeedBody(data, size, consumed);
}

RequestDecoder::Stage RequestDecoder::FeedHead(const char* data, size_t size, size_t* consumed) {
  if (!started_) {
    // RFC 9112 2.2: empty lines before the request line are ignored.
    size_t skip = 0;
    while (skip + 1 < size && data[skip] == '\r' && data[skip + 1] == '\n') skip += 2;
    *consumed = skip;
    data += skip;
    size -= skip;
    if (size == 0 || (size == 1 && data[0] == '\r')) return stage_;
    started_ = true;
  }
  // Scan the new bytes for line ends, resuming where the last call ended
  // (data[0..scan_pos_) is what earlier calls already saw). Every check
  // depends only on the bytes up to the one at hand, so the outcome does
  // not depend on how the input was split into reads.
  const size_t max_line = limits_.max_request_line_bytes;
  const size_t max_head = limits_.max_header_bytes;
  size_t header_end = 0;
  for (size_t i = scan_pos_; i < size; ++i) {
    const char c = data[i];
    if (!line_done_ && i >= max_line && c != '\r' && c != '\n') {
      return Fail(414, "request line too long");
    }
    if (i >= max_head) return Fail(431, "request header too large");
    if (i > 0 && data[i - 1] == '\r' && c != '\n') return Fail(400, "bare CR in request head");
    if (c != '\n') continue;
    if (i == 0 || data[i - 1] != '\r') return Fail(400, "bare LF in request head");
    const size_t line_end = i - 1;
    if (!line_done_) {
      if (!CheckRequestLine(data, line_end)) return stage_;
      line_done_ = true;
    } else if (line_end == line_start_) {
      header_end = i + 1;
      break;
    } else {
      if (IsOws(data[line_start_])) return Fail(400, "obsolete line folding in request header");
      if (++fields_ > limits_.max_header_fields) return Fail(431, "too many header fields");
    }
    line_start_ = i + 1;
  }
  if (header_end == 0) {
    scan_pos_ = size;
    return stage_;
  }

  error_code ec;
  const size_t used = parser_->put(boost::asio::const_buffer(data, header_end), ec);
  if (ec == bhttp::error::header_limit) return Fail(431, "request header too large");
  if (ec || used != header_end || !parser_->is_header_done()) {
    return Fail(400, ec ? "malformed request: " + ec.message() : "malformed request head");
  }
  *consumed += header_end;
  head_done_ = true;
  return CheckHead();
}

bool RequestDecoder::CheckRequestLine(const char* line, size_t size) {
  // Only what Beast would report too vaguely: an HTTP version it does not
  // speak is 505, not 400. The rest of the line is Beast's to check.
  const std::string_view l(line, size);
  const size_t sp = l.rfind(' ');
  if (sp == std::string_view::npos) return true;
  const std::string_view v = l.substr(sp + 1);
  if (v.size() == 8 && v.substr(0, 5) == "HTTP/" && v[5] >= '0' && v[5] <= '9' && v[6] == '.' &&
      v[7] >= '0' && v[7] <= '9' && (v[5] != '1' || v[7] > '1')) {
    Fail(505, "HTTP version not supported");
    return false;
  }
  return true;
}

RequestDecoder::Stage RequestDecoder::CheckHead() {
  HttpRequest& r = request_;
  const Headers& h = r.headers;
  const bool http11 = r.version_minor >= 1;

  // Target: origin-form, absolute-form (RFC 9112 3.2.2: servers accept
  // it), or "*" for OPTIONS. path/query come from the origin part.
  std::string_view origin;
  if (!r.target.empty() && r.target[0] == '/') {
    origin = r.target;
  } else if (r.target == "*" && r.method == "OPTIONS") {
    origin = r.target;
  } else {
    const size_t scheme_end = r.target.find("://");
    const std::string_view scheme = std::string_view(r.target).substr(0, scheme_end);
    if (scheme_end == std::string::npos ||
        !(EqualsIgnoreCase(scheme, "http") || EqualsIgnoreCase(scheme, "https"))) {
      return Fail(400, "invalid request target");
    }
    const size_t path_start = r.target.find_first_of("/?", scheme_end + 3);
    if (path_start == scheme_end + 3) return Fail(400, "invalid request target");
    origin = path_start == std::string::npos ? std::string_view("/")
                                             : std::string_view(r.target).substr(path_start);
  }
  const size_t q = origin.find('?');
  r.path = std::string(origin.substr(0, q));
  if (r.path.empty()) r.path = "/";
  r.query = q == std::string_view::npos ? "" : std::string(origin.substr(q + 1));

  const size_t hosts = h.Count("Host");
  if (http11 && hosts == 0) return Fail(400, "missing Host header");
  if (hosts > 1) return Fail(400, "repeated Host header");

  const size_t lengths = h.Count("Content-Length");
  const bool has_te = h.Has("Transfer-Encoding");
  if (lengths > 1) return Fail(400, "repeated Content-Length");
  if (lengths == 1) {
    const std::string v = h.Get("Content-Length");
    // 20 digits may already overflow uint64; bodies that large are
    // refused anyway.
    if (!AllDigits(v) || v.size() > 19) return Fail(400, "invalid Content-Length");
    content_length_ = std::stoull(v);
  }
  if (has_te) {
    if (lengths > 0) return Fail(400, "Transfer-Encoding together with Content-Length");
    if (!http11) return Fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    std::vector<std::string_view> codings;
    for (const Headers::Field& f : h.fields()) {
      if (!EqualsIgnoreCase(f.first, "Transfer-Encoding")) continue;
      for (std::string_view c : SplitList(f.second)) codings.push_back(c);
    }
    if (codings.empty() || !EqualsIgnoreCase(codings.back(), "chunked")) {
      return Fail(400, "final transfer coding is not chunked");
    }
    if (codings.size() > 1) {
      if (EqualsIgnoreCase(codings.front(), "chunked")) return Fail(400, "chunked applied twice");
      return Fail(501, "unsupported transfer coding");
    }
    chunked_ = true;
  }

  if (h.Has("Expect")) {
    if (h.Count("Expect") > 1 || !EqualsIgnoreCase(Trim(h.Get("Expect")), "100-continue")) {
      return Fail(417, "unsupported expectation");
    }
    // An HTTP/1.0 client cannot take an interim response (RFC 9110 10.1.1).
    expects_continue_ = http11;
  }

  bool close = false;
  bool keep = false;
  for (const Headers::Field& f : h.fields()) {
    if (!EqualsIgnoreCase(f.first, "Connection")) continue;
    for (std::string_view t : SplitList(f.second)) {
      if (EqualsIgnoreCase(t, "close")) close = true;
      if (EqualsIgnoreCase(t, "keep-alive")) keep = true;
    }
  }
  keep_alive_ = !close && (http11 || keep);
  stage_ = Stage::kHeadReady;
  return stage_;
}

RequestDecoder::Stage RequestDecoder::BeginBody(size_t max_body_bytes) {
  if (stage_ != Stage::kHeadReady) return stage_;
  body_limit_ = max_body_bytes;
  if (content_length_ && *content_length_ > max_body_bytes) {
    return Fail(413, "request body too large");
  }
  if (parser_->is_done()) {
    stage_ = Stage::kComplete;
    return stage_;
  }
  parser_->eager(true);
  stage_ = Stage::kNeedMore;
  return stage_;
}

RequestDecoder::Stage RequestDecoder::FeedBody(const char* data, size_t size, size_t* consumed) {
  if (parser_->is_done()) {
    stage_ = Stage::kComplete;
    return stage_;
  }
  if (size == 0) return stage_;
  error_code ec;
  *consumed = parser_->put(boost::asio::const_buffer(data, size), ec);
  if (pending_status_ != 0) return Fail(pending_status_, pending_message_);
  if (ec == bhttp::error::need_more) {
    // Only a chunk line or the trailer section is waited for whole; bound
    // what may pile up for it.
    if (size - *consumed > std::max(limits_.max_header_bytes, kMinBodyLineCap)) {
      return Fail(400, "chunk header or trailer too long");
    }
    ec = {};
  }
  if (ec == bhttp::error::body_limit) return Fail(413, "request body too large");
  if (ec) return Fail(400, "malformed request body: " + ec.message());
  if (parser_->is_done()) stage_ = Stage::kComplete;
  return stage_;
}

}  // namespace gpumon::http
