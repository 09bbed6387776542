// Connection: one accepted client connection, driven on its own strand.
//
// It reads into a small buffer that grows only as a request needs, feeds a
// RequestDecoder, runs the server's per-request steps (see server.h),
// hands the request to the worker pool (or runs an inline route itself),
// and writes the response. One request at a time: bytes pipelined behind
// it wait in the buffer until its response is written, while the
// connection keeps reading (up to a bound) so a hang-up is noticed and
// raises the running request's Cancellation.
//
// Deadlines (one timer for reading, one for writing): idle_timeout while
// waiting for the first byte of a request, header_timeout from that byte
// to the end of the head (also bounds the TLS handshake), body_timeout for
// the body, write_timeout for each write. A partial request that runs out
// of time gets 408; otherwise the connection just closes.
//
// Closing after a response is "lingering": the write side is shut down
// and input is drained for up to a second, so a client still sending a
// body we refused reads our answer instead of a reset.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "http/request_decoder.h"
#include "http/response.h"
#include "http/response_writer.h"
#include "http/router.h"
#include "http/server_core.h"

namespace gpumon::http {

class StreamState;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Socket = boost::asio::ip::tcp::socket;

  Connection(ServerCore* core, Socket socket);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Each of these may be called from any thread; the work runs on the
  // connection's strand.
  void Start();
  // Server shutdown: raise the running request's Cancellation, close now
  // unless a handler runs (then close after its response).
  void BeginStop();
  void ForceClose();

 private:
  enum class Phase {
    kHandshake,
    kReadHead,
    kAuthorize,  // a deferred credential check runs on the authorization thread
    kReadBody,
    kHandler,
    kRespond,
    kLinger,
    kClosed
  };
  enum class Deadline { kNone, kHandshake, kIdle, kHeader, kBody, kLinger };

  // Reading.
  void MaybeRead();
  void OnRead(const boost::system::error_code& ec, size_t n);
  void OnPeerGone(bool clean_eof);
  bool EnsureSpace(size_t min_free);
  size_t Buffered() const { return end_ - start_; }

  // The per-request steps.
  void EnterReadHead();
  void Process();
  void OnHead();
  Authorization Authorize(const HttpRequest& head, bool may_block);
  void OnAuthorized(Authorization a);
  void Refuse(HttpResponse refusal);
  void RouteHead();
  void OnComplete();
  void Dispatch(std::shared_ptr<HttpRequest> req);
  void RespondError(int status, std::string_view type, std::string_view message, bool close,
                    std::string allow = "");
  void StartResponse(HttpResponse res, std::shared_ptr<StreamState> stream, bool force_close);
  void FinishResponse();

  // Writing.
  void Send(std::string data);
  void Flush();
  void OnWritten(const boost::system::error_code& ec);
  void Pump();
  std::shared_ptr<StreamState> MakeStream();

  // Deadlines and closing.
  void ArmRead(Deadline kind, std::chrono::milliseconds after);
  void CancelRead();
  void OnReadDeadline();
  void LingerClose();
  void Close();

  ServerCore* const core_;
  Socket socket_;
  const boost::asio::any_io_executor ex_;  // the connection's strand
  std::unique_ptr<boost::asio::ssl::stream<Socket&>> tls_;
  boost::asio::steady_timer read_timer_;
  boost::asio::steady_timer write_timer_;
  std::string remote_address_;

  Phase phase_ = Phase::kReadHead;
  Deadline deadline_ = Deadline::kNone;
  uint64_t read_gen_ = 0;
  uint64_t write_gen_ = 0;
  bool reading_ = false;
  bool writing_ = false;
  bool peer_eof_ = false;
  bool stopping_ = false;
  bool close_after_ = false;
  bool tls_shutdown_started_ = false;
  size_t lingered_bytes_ = 0;

  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  size_t start_ = 0;
  size_t end_ = 0;

  RequestDecoder decoder_;
  const Route* route_ = nullptr;
  std::vector<std::string> captures_;
  bool head_request_ = false;
  bool http10_ = false;
  bool keep_alive_ = true;
  std::shared_ptr<Cancellation> cancel_;  // of the request whose handler runs

  std::vector<std::string> out_;        // queued, not yet handed to the socket
  std::vector<std::string> in_flight_;  // being written
  size_t out_stream_bytes_ = 0;         // body bytes of a stream in out_ / in_flight_
  size_t in_flight_stream_bytes_ = 0;
  std::shared_ptr<StreamState> stream_;
  bool stream_chunked_ = false;
  bool stream_done_ = false;
};

}  // namespace gpumon::http
