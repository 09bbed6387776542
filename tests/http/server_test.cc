// http::Server over loopback sockets: framing, keep-alive, pipelining,
// limits, deadlines, cancellation, streaming, shutdown.
#include "http/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_client.h"

namespace gpumon::http {
namespace {

using namespace std::chrono_literals;
using testing::ParsedResponse;
using testing::RawClient;
using testing::TestServer;
using testing::WaitFor;

// A one-shot gate handlers wait on, released by the test.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // False if not opened within `bound`.
  bool Wait(std::chrono::milliseconds bound = 20s) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, bound, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

ServerOptions DefaultOptions() {
  ServerOptions o;
  o.io_threads = 2;
  o.worker_threads = 4;
  o.default_headers.Add("X-Frame-Options", "deny");
  return o;
}

Router EchoRouter() {
  Router r;
  r.Get("/hello",
        [](const HttpRequest&, HttpResponse& res) { res.SetContent("hi", "text/plain"); });
  r.Get("/echo/(.*)", [](const HttpRequest& req, HttpResponse& res) {
    if (req.captures[0] == "slow") std::this_thread::sleep_for(100ms);
    res.SetContent(req.captures[0] + "?" + req.Param("q"), "text/plain");
  });
  r.Post("/form", [](const HttpRequest& req, HttpResponse& res) {
    std::string out;
    for (const std::string& v : req.ParamValues("v")) out += v + ";";
    res.SetContent(out + "len=" + std::to_string(req.body.size()), "text/plain");
  });
  r.Post(
      "/small", [](const HttpRequest& req, HttpResponse& res) { res.body = req.body; },
      RouteOptions{.max_body_bytes = 10});
  r.Get("/throw", [](const HttpRequest&, HttpResponse&) -> void {
    throw std::runtime_error("secret internals\r\nX-Injected: yes");
  });
  r.Get("/header", [](const HttpRequest&, HttpResponse& res) {
    res.SetHeader("X-Ok", "fine");
    res.SetHeader("X-Bad", "a\r\nX-Injected: yes");
    res.SetHeader("Content-Length", "999");
    res.SetHeader("X-Frame-Options", "sameorigin");
    res.body = "x";
  });
  r.Get("/nocontent", [](const HttpRequest&, HttpResponse& res) { res.status = 204; });
  return r;
}

std::string Get(const std::string& path, const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: t\r\n" + extra + "\r\n";
}

TEST(ServerTest, KeepAliveAndHeaders) {
  TestServer ts(EchoRouter(), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(c.connected());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.Send(Get("/hello")));
    ParsedResponse r;
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "hi");
    EXPECT_EQ(r.headers.Get("Content-Length"), "2");
    EXPECT_EQ(r.headers.Get("Content-Type"), "text/plain");
    EXPECT_EQ(r.headers.Get("X-Frame-Options"), "deny");
    EXPECT_TRUE(r.headers.Get("Date").ends_with(" GMT"));
    EXPECT_FALSE(r.headers.Has("Connection"));
  }
  const ServerStats st = ts.server().Stats();
  EXPECT_EQ(st.requests, 3u);
  EXPECT_EQ(st.connections_accepted, 1u);
  EXPECT_EQ(st.connections_open, 1u);
}

TEST(ServerTest, NotFoundAndMethodNotAllowedAreJson) {
  TestServer ts(EchoRouter(), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/nope")));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(r.headers.Get("X-Frame-Options"), "deny");
  EXPECT_EQ(r.body, R"({"status":"error","errorType":"not_found","error":"not found"})");
  ASSERT_TRUE(c.Send("DELETE /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.Get("Allow"), "GET, HEAD");
  // Still usable: neither announced a body.
  ASSERT_TRUE(c.Send(Get("/hello")));
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 200);
}

TEST(ServerTest, PipelinedRequestsAnsweredInOrder) {
  TestServer ts(EchoRouter(), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/echo/slow?q=1") + Get("/echo/b?q=2") +
                     "POST /form HTTP/1.1\r\nHost: t\r\nContent-Type: "
                     "application/x-www-form-urlencoded\r\nContent-Length: 7\r\n\r\nv=a&v=b"));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.body, "slow?1");
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.body, "b?2");
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.body, "a;b;len=7");
  // A read-ahead was in flight while the buffered requests were answered:
  // the next request must land where the decoder looks, not be replaced by
  // stale bytes of the first (the answer would be "slow?1" again).
  for (const char* q : {"4", "55555", "6"}) {
    ASSERT_TRUE(c.Send(Get(std::string("/echo/next?q=") + q)));
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, std::string("next?") + q);
  }
  EXPECT_EQ(ts.server().Stats().requests, 6u);
}

TEST(ServerTest, ChunkedRequestBody) {
  TestServer ts(EchoRouter(), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(
      c.Send("POST /form?v=q HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
             "3\r\nabc\r\n"));
  std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(c.Send("2\r\nde\r\n0\r\n\r\n"));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "q;len=5");
}

TEST(ServerTest, Http10ClosesUnlessKeepAlive) {
  TestServer ts(EchoRouter(), DefaultOptions());
  {
    RawClient c(ts.port());
    ASSERT_TRUE(c.Send("GET /hello HTTP/1.0\r\n\r\n"));
    ParsedResponse r;
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.headers.Get("Connection"), "close");
    std::string rest;
    EXPECT_TRUE(c.ReadUntilClosed(&rest));
    EXPECT_EQ(rest, "");
  }
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.headers.Get("Connection"), "keep-alive");
  ASSERT_TRUE(c.Send(Get("/hello", "Connection: close\r\n")));
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.headers.Get("Connection"), "close");
  std::string rest;
  EXPECT_TRUE(c.ReadUntilClosed(&rest));
}

TEST(ServerTest, HeadHasNoBody) {
  TestServer ts(EchoRouter(), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(
      c.Send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n" + Get("/nocontent") + Get("/hello")));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r, /*head_request=*/true));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.Get("Content-Length"), "2");
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 204);
  EXPECT_FALSE(r.headers.Has("Content-Length"));
  ASSERT_TRUE(c.ReadResponse(&r));  // would be misparsed had HEAD sent a body
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hi");
}

TEST(ServerTest, HandlerExceptionIsGeneric500) {
  TestServer ts(EchoRouter(), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/throw")));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, R"({"status":"error","errorType":"internal","error":"internal server error"})");
  EXPECT_FALSE(r.headers.Has("X-Injected"));
  ASSERT_TRUE(c.Send(Get("/hello")));
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 200);
}

TEST(ServerTest, UnsafeAndFramingHeadersFromHandlersDropped) {
  TestServer ts(EchoRouter(), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/header")));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.headers.Get("X-Ok"), "fine");
  EXPECT_FALSE(r.headers.Has("X-Bad"));
  EXPECT_FALSE(r.headers.Has("X-Injected"));
  EXPECT_EQ(r.headers.Get("Content-Length"), "1");
  EXPECT_EQ(r.headers.Count("X-Frame-Options"), 1u);
  EXPECT_EQ(r.headers.Get("X-Frame-Options"), "sameorigin");
}

void ExpectJsonErrorAndClose(RawClient& c, int status) {
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r)) << status;
  EXPECT_EQ(r.status, status);
  EXPECT_EQ(r.headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(r.headers.Get("Connection"), "close");
  EXPECT_EQ(r.headers.Get("X-Frame-Options"), "deny");
  EXPECT_TRUE(r.body.starts_with(R"({"status":"error","errorType":"bad_data","error":")"))
      << r.body;
  std::string rest;
  EXPECT_TRUE(c.ReadUntilClosed(&rest));
}

TEST(ServerTest, LimitsAnsweredWithJson) {
  ServerOptions o = DefaultOptions();
  o.limits.max_request_line_bytes = 1000;
  o.limits.max_header_bytes = 4000;
  o.limits.max_header_fields = 10;
  TestServer ts(EchoRouter(), o);
  {
    RawClient c(ts.port());
    ASSERT_TRUE(c.Send(Get("/echo/" + std::string(2000, 'a'))));
    ExpectJsonErrorAndClose(c, 414);
  }
  {
    RawClient c(ts.port());
    ASSERT_TRUE(c.Send(Get("/hello", "X-Big: " + std::string(5000, 'b') + "\r\n")));
    ExpectJsonErrorAndClose(c, 431);
  }
  {
    RawClient c(ts.port());
    std::string many;
    for (int i = 0; i < 11; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
    ASSERT_TRUE(c.Send(Get("/hello", many)));
    ExpectJsonErrorAndClose(c, 431);
  }
  {
    // Refused on the announced length; the body keeps coming.
    RawClient c(ts.port());
    ASSERT_TRUE(c.Send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" +
                       std::string(30000, 'x')));
    ExpectJsonErrorAndClose(c, 413);
  }
  {
    RawClient c(ts.port());
    ASSERT_TRUE(
        c.Send("POST /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
               "8\r\n12345678\r\n8\r\n12345678\r\n"));
    ExpectJsonErrorAndClose(c, 413);
  }
  {
    RawClient c(ts.port());
    ASSERT_TRUE(
        c.Send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 1"
               "\r\n\r\nx"));
    ExpectJsonErrorAndClose(c, 400);
  }
  {
    RawClient c(ts.port());
    ASSERT_TRUE(c.Send("GET /hello HTTP/1.1\r\n\r\n"));  // no Host
    ExpectJsonErrorAndClose(c, 400);
  }
  EXPECT_GE(ts.server().Stats().rejected_requests, 7u);
}

TEST(ServerTest, ExpectContinueOnlyAfterChecks) {
  TestServer ts(EchoRouter(), DefaultOptions());
  {
    RawClient c(ts.port());
    ASSERT_TRUE(
        c.Send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
               "Expect: 100-continue\r\n\r\n"));
    ParsedResponse r;
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 100);
    ASSERT_TRUE(c.Send("abc"));
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "abc");
  }
  {
    RawClient c(ts.port());
    ASSERT_TRUE(
        c.Send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 30\r\n"
               "Expect: 100-continue\r\n\r\n"));
    ParsedResponse r;
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 413);  // and no "100 Continue" before it
  }
  {
    RawClient c(ts.port());
    ASSERT_TRUE(
        c.Send("POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
               "Expect: 100-continue\r\n\r\n"));
    ParsedResponse r;
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 404);
  }
}

// A refusal for the test authorizers: 401 with a challenge.
Authorization Deny() {
  Authorization a;
  a.verdict = Authorization::Verdict::kDeny;
  a.refusal.status = 401;
  a.refusal.SetHeader("WWW-Authenticate", "Basic");
  a.refusal.SetContent("Unauthorized\n", "text/plain");
  return a;
}

TEST(ServerTest, AuthorizeSeesHeadBeforeBody) {
  ServerOptions o = DefaultOptions();
  o.authorize = [](const HttpRequest& head, bool) {
    return head.Header("Authorization") == "ok" ? Authorization{} : Deny();
  };
  TestServer ts(EchoRouter(), o);
  RawClient c(ts.port());
  ASSERT_TRUE(
      c.Send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n"
             "Expect: 100-continue\r\n\r\n"));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers.Get("WWW-Authenticate"), "Basic");
  EXPECT_EQ(r.headers.Get("Connection"), "close");
  RawClient ok(ts.port());
  ASSERT_TRUE(ok.Send(Get("/hello", "Authorization: ok\r\n")));
  ASSERT_TRUE(ok.ReadResponse(&r));
  EXPECT_EQ(r.status, 200);
}

TEST(ServerTest, AuthorizeComesBeforeRouting) {
  ServerOptions o = DefaultOptions();
  o.authorize = [](const HttpRequest& head, bool) {
    return head.Header("Authorization") == "ok" ? Authorization{} : Deny();
  };
  TestServer ts(EchoRouter(), o);
  ParsedResponse r;
  RawClient anonymous(ts.port());
  ASSERT_TRUE(anonymous.Send(Get("/no-such-path")));
  ASSERT_TRUE(anonymous.ReadResponse(&r));
  EXPECT_EQ(r.status, 401);  // not 404: unauthenticated peers learn nothing
  RawClient known(ts.port());
  ASSERT_TRUE(known.Send(Get("/no-such-path", "Authorization: ok\r\n")));
  ASSERT_TRUE(known.ReadResponse(&r));
  EXPECT_EQ(r.status, 404);
}

// The slow check runs on the authorization thread, not the network thread:
// while it is blocked, a request with a quickly decided credential on
// another connection is still answered (one io thread).
TEST(ServerTest, DeferredAuthorizationRunsOffTheNetworkThread) {
  ServerOptions o = DefaultOptions();
  o.io_threads = 1;
  Gate release;
  std::atomic<int> slow_checks{0};
  o.authorize = [&](const HttpRequest& head, bool may_block) {
    const std::string cred = head.Header("Authorization");
    if (cred == "cached") return Authorization{};
    if (!may_block) {
      Authorization defer;
      defer.verdict = Authorization::Verdict::kDefer;
      return defer;
    }
    ++slow_checks;
    release.Wait();
    return cred == "slow-ok" ? Authorization{} : Deny();
  };
  TestServer ts(EchoRouter(), o);
  RawClient slow(ts.port());
  ASSERT_TRUE(slow.Send(Get("/hello", "Authorization: slow-ok\r\n")));
  ASSERT_TRUE(WaitFor([&] { return slow_checks.load() == 1; }));
  ParsedResponse r;
  RawClient fast(ts.port());
  ASSERT_TRUE(fast.Send(Get("/hello", "Authorization: cached\r\n")));
  ASSERT_TRUE(fast.ReadResponse(&r));
  EXPECT_EQ(r.status, 200);
  release.Open();
  ASSERT_TRUE(slow.ReadResponse(&r));
  EXPECT_EQ(r.status, 200);
  RawClient wrong(ts.port());
  ASSERT_TRUE(wrong.Send(Get("/hello", "Authorization: wrong\r\n")));
  ASSERT_TRUE(wrong.ReadResponse(&r));
  EXPECT_EQ(r.status, 401);
}

TEST(ServerTest, ManyIdleConnectionsDoNotBlockOthers) {
  ServerOptions o = DefaultOptions();
  o.io_threads = 1;
  o.worker_threads = 2;
  TestServer ts(EchoRouter(), o);
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<RawClient>(ts.port()));
    ASSERT_TRUE(idle.back()->connected());
    if (i % 2 == 0) {
      ASSERT_TRUE(idle.back()->Send("GET /hel"));  // a partial request
    }
  }
  ASSERT_TRUE(WaitFor([&] { return ts.server().Stats().connections_open >= 200; }));
  for (int i = 0; i < 5; ++i) {
    RawClient c(ts.port());
    ASSERT_TRUE(c.Send(Get("/hello")));
    ParsedResponse r;
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 200);
  }
  // The idle ones still work too.
  ASSERT_TRUE(idle[0]->Send("lo HTTP/1.1\r\nHost: t\r\n\r\n"));
  ParsedResponse r;
  ASSERT_TRUE(idle[0]->ReadResponse(&r));
  EXPECT_EQ(r.body, "hi");
}

TEST(ServerTest, SlowHeaderClosedAfterHeaderTimeout) {
  ServerOptions o = DefaultOptions();
  o.limits.header_timeout = 300ms;
  TestServer ts(EchoRouter(), o);
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send("GET /hello HTTP/1.1\r\nHost: t\r\n"));
  // Keep trickling: a slow client must not extend the deadline.
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(50ms);
    c.Send("X-Slow: 1\r\n");
  }
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r, false, 10s));
  EXPECT_EQ(r.status, 408);
  EXPECT_TRUE(r.body.find(R"("errorType":"timeout")") != std::string::npos) << r.body;
  std::string rest;
  EXPECT_TRUE(c.ReadUntilClosed(&rest, 10s));
  EXPECT_GE(ts.server().Stats().timeouts, 1u);
}

TEST(ServerTest, IdleConnectionClosedAfterIdleTimeout) {
  ServerOptions o = DefaultOptions();
  o.limits.idle_timeout = 300ms;
  TestServer ts(EchoRouter(), o);
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/hello")));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  std::string rest;
  EXPECT_TRUE(c.ReadUntilClosed(&rest, 10s));
  EXPECT_EQ(rest, "");  // no 408 for a connection between requests
}

TEST(ServerTest, BodyTimeout) {
  ServerOptions o = DefaultOptions();
  o.limits.body_timeout = 300ms;
  TestServer ts(EchoRouter(), o);
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send("POST /small HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nab"));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 408);
}

TEST(ServerTest, ClientDisconnectCancelsHandler) {
  Router router;
  auto saw_cancel = std::make_shared<std::atomic<bool>>(false);
  auto started = std::make_shared<std::atomic<bool>>(false);
  router.Get("/block", [=](const HttpRequest& req, HttpResponse& res) {
    started->store(true);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!req.cancel->cancelled() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(2ms);
    }
    saw_cancel->store(req.cancel->cancelled());
    res.body = "late";
  });
  TestServer ts(std::move(router), DefaultOptions());
  {
    RawClient c(ts.port());
    ASSERT_TRUE(c.Send(Get("/block")));
    ASSERT_TRUE(WaitFor([&] { return started->load(); }));
  }  // hang up
  ASSERT_TRUE(WaitFor([&] { return saw_cancel->load(); }));
  EXPECT_TRUE(WaitFor([&] { return ts.server().Stats().canceled_requests == 1; }));
}

TEST(ServerTest, StopReturnsAfterDrainTimeoutWhileHandlerIgnoresCancel) {
  Router router;
  auto gate = std::make_shared<Gate>();
  auto started = std::make_shared<std::atomic<bool>>(false);
  auto saw_cancel = std::make_shared<std::atomic<bool>>(false);
  router.Get("/stuck", [=](const HttpRequest& req, HttpResponse&) {
    started->store(true);
    gate->Wait();
    saw_cancel->store(req.cancel->cancelled());
  });
  ServerOptions o = DefaultOptions();
  o.limits.drain_timeout = 300ms;
  TestServer ts(std::move(router), o);
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/stuck")));
  ASSERT_TRUE(WaitFor([&] { return started->load(); }));
  RawClient idle(ts.port());
  ASSERT_TRUE(WaitFor([&] { return ts.server().Stats().connections_open == 2; }));
  EXPECT_TRUE(ts.StopAndJoin(20s));  // returns although the handler is still stuck
  std::string rest;
  EXPECT_TRUE(c.ReadUntilClosed(&rest));
  EXPECT_TRUE(idle.ReadUntilClosed(&rest));
  gate->Open();
  EXPECT_TRUE(WaitFor([&] { return saw_cancel->load(); }));
}

TEST(ServerTest, StopLetsQuickHandlerAnswer) {
  Router router;
  auto gate = std::make_shared<Gate>();
  auto started = std::make_shared<std::atomic<bool>>(false);
  router.Get("/wait", [=](const HttpRequest& req, HttpResponse& res) {
    started->store(true);
    gate->Wait();
    res.body = req.cancel->cancelled() ? "cancelled" : "no";
  });
  ServerOptions o = DefaultOptions();
  o.limits.drain_timeout = 20s;
  TestServer ts(std::move(router), o);
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/wait")));
  ASSERT_TRUE(WaitFor([&] { return started->load(); }));
  std::thread stopper([&] { ts.StopAndJoin(); });
  std::this_thread::sleep_for(50ms);
  gate->Open();
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.body, "cancelled");
  EXPECT_EQ(r.headers.Get("Connection"), "close");
  stopper.join();
}

TEST(ServerTest, ConnectionCapAnswers503) {
  ServerOptions o = DefaultOptions();
  o.limits.max_connections = 2;
  TestServer ts(EchoRouter(), o);
  RawClient a(ts.port());
  RawClient b(ts.port());
  ASSERT_TRUE(WaitFor([&] { return ts.server().Stats().connections_open == 2; }));
  RawClient c(ts.port());
  std::string got;
  ASSERT_TRUE(c.ReadUntilClosed(&got));
  EXPECT_TRUE(got.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << got;
  EXPECT_NE(got.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(got.find("X-Frame-Options: deny\r\n"), std::string::npos);
  EXPECT_NE(got.find(R"("errorType":"unavailable")"), std::string::npos);
  EXPECT_EQ(ts.server().Stats().connections_refused, 1u);
  // The admitted ones are served.
  ASSERT_TRUE(a.Send(Get("/hello")));
  ParsedResponse r;
  ASSERT_TRUE(a.ReadResponse(&r));
  EXPECT_EQ(r.status, 200);
}

TEST(ServerTest, FullQueueAnswers503AndInlineRoutesStillAnswer) {
  Router router;
  auto gate = std::make_shared<Gate>();
  auto running = std::make_shared<std::atomic<int>>(0);
  router.Get("/work", [=](const HttpRequest&, HttpResponse& res) {
    running->fetch_add(1);
    gate->Wait();
    res.body = "done";
  });
  router.Get(
      "/-/healthy", [](const HttpRequest&, HttpResponse& res) { res.body = "ok"; },
      RouteOptions{.max_body_bytes = std::nullopt, .run_inline = true});
  ServerOptions o = DefaultOptions();
  o.worker_threads = 1;
  o.limits.max_queued_requests = 1;
  TestServer ts(std::move(router), o);
  RawClient a(ts.port());
  ASSERT_TRUE(a.Send(Get("/work")));
  ASSERT_TRUE(WaitFor([&] { return running->load() == 1; }));
  RawClient b(ts.port());
  ASSERT_TRUE(b.Send(Get("/work")));  // queued
  ASSERT_TRUE(WaitFor([&] { return ts.server().Stats().requests == 2; }));
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/work")));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find(R"("errorType":"unavailable")"), std::string::npos);
  ASSERT_TRUE(c.Send(Get("/-/healthy")));
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  gate->Open();
  ASSERT_TRUE(a.ReadResponse(&r));
  EXPECT_EQ(r.body, "done");
  ASSERT_TRUE(b.ReadResponse(&r));
  EXPECT_EQ(r.body, "done");
}

// A producer writing `total` bytes of a known pattern in 64 KiB pieces.
struct Producer {
  std::atomic<size_t> written{0};
  std::atomic<bool> write_failed{false};
  std::atomic<bool> finished{false};
};

char PatternAt(size_t i) { return static_cast<char>('a' + (i * 7 + i / 4096) % 26); }

Router StreamRouter(std::shared_ptr<Producer> p, size_t total) {
  Router router;
  router.Get("/stream", [p, total](const HttpRequest&, HttpResponse& res) {
    res.Stream("application/octet-stream", [p, total](const BodyWriter& write) {
      std::string piece;
      for (size_t off = 0; off < total;) {
        const size_t n = std::min<size_t>(64 * 1024, total - off);
        piece.resize(n);
        for (size_t i = 0; i < n; ++i) piece[i] = PatternAt(off + i);
        if (!write(piece.data(), n)) {
          p->write_failed.store(true);
          p->finished.store(true);
          return false;
        }
        off += n;
        p->written.store(off);
      }
      p->finished.store(true);
      return true;
    });
  });
  return router;
}

TEST(ServerTest, StreamingAppliesBackPressure) {
  constexpr size_t kTotal = 64 * 1024 * 1024;
  auto p = std::make_shared<Producer>();
  ServerOptions o = DefaultOptions();
  o.limits.stream_high_water_bytes = 256 * 1024;
  TestServer ts(StreamRouter(p, kTotal), o);
  RawClient c(ts.port(), /*rcvbuf=*/64 * 1024);
  ASSERT_TRUE(c.Send(Get("/stream")));
  // Not reading: the producer must stall well short of the whole body
  // (high-water mark plus what the kernel's socket buffers hold).
  ASSERT_TRUE(WaitFor([&] { return p->written.load() > 0; }));
  std::this_thread::sleep_for(300ms);
  const size_t stalled_at = p->written.load();
  RecordProperty("stalled_at_bytes", std::to_string(stalled_at));
  EXPECT_LT(stalled_at, kTotal / 2);
  EXPECT_FALSE(p->finished.load());
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r, false, 60s));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.chunked);
  ASSERT_EQ(r.body.size(), kTotal);
  bool same = true;
  for (size_t i = 0; i < kTotal && same; ++i) same = r.body[i] == PatternAt(i);
  EXPECT_TRUE(same);
  EXPECT_TRUE(p->finished.load());
  EXPECT_FALSE(p->write_failed.load());
  // Keep-alive after a chunked stream.
  ASSERT_TRUE(c.Send(Get("/stream")));
  c.Close();
  ASSERT_TRUE(WaitFor([&] { return p->finished.load(); }));
}

TEST(ServerTest, StreamWriterFailsWhenClientGoes) {
  constexpr size_t kTotal = 512 * 1024 * 1024;
  auto p = std::make_shared<Producer>();
  ServerOptions o = DefaultOptions();
  o.limits.stream_high_water_bytes = 64 * 1024;
  TestServer ts(StreamRouter(p, kTotal), o);
  {
    RawClient c(ts.port());
    ASSERT_TRUE(c.Send(Get("/stream")));
    ASSERT_TRUE(c.ReadAtLeast(100 * 1024));
  }
  ASSERT_TRUE(WaitFor([&] { return p->finished.load(); }, 30s));
  EXPECT_TRUE(p->write_failed.load());
  EXPECT_LT(p->written.load(), kTotal);
}

TEST(ServerTest, Http10StreamIsCloseDelimited) {
  auto p = std::make_shared<Producer>();
  TestServer ts(StreamRouter(p, 100000), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send("GET /stream HTTP/1.0\r\n\r\n"));
  ParsedResponse r;
  ASSERT_TRUE(c.ReadResponse(&r));
  EXPECT_FALSE(r.chunked);
  EXPECT_FALSE(r.headers.Has("Content-Length"));
  EXPECT_EQ(r.headers.Get("Connection"), "close");
  EXPECT_EQ(r.body.size(), 100000u);
}

TEST(ServerTest, StreamProducerAbortTruncates) {
  Router router;
  router.Get("/abort", [](const HttpRequest&, HttpResponse& res) {
    res.Stream("text/plain", [](const BodyWriter& write) {
      write("partial", 7);
      return false;
    });
  });
  TestServer ts(std::move(router), DefaultOptions());
  RawClient c(ts.port());
  ASSERT_TRUE(c.Send(Get("/abort")));
  std::string got;
  ASSERT_TRUE(c.ReadUntilClosed(&got));
  EXPECT_TRUE(got.starts_with("HTTP/1.1 200 OK\r\n")) << got;
  EXPECT_EQ(got.find("0\r\n\r\n"), std::string::npos) << got;  // never the last chunk
}

TEST(ServerTest, BindReportsConflicts) {
  Server a(Router(), DefaultOptions());
  ASSERT_TRUE(a.Bind("127.0.0.1", 0).ok());
  Server b(Router(), DefaultOptions());
  const Status st = b.Bind("127.0.0.1", a.port());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(std::to_string(a.port())), std::string::npos) << st.message();
  Server c(Router(), DefaultOptions());
  EXPECT_FALSE(c.Bind("no.such.host.invalid", 0).ok());
}

TEST(ServerTest, StopBeforeRunReturns) {
  Server s(EchoRouter(), DefaultOptions());
  ASSERT_TRUE(s.Bind("127.0.0.1", 0).ok());
  s.Stop();
  s.Run();  // returns at once
  SUCCEED();
}

TEST(ServerTest, DualStackBind) {
  Server s(EchoRouter(), DefaultOptions());
  if (!s.Bind("::", 0).ok()) GTEST_SKIP() << "no IPv6 here";
  std::thread t([&] { s.Run(); });
  {
    RawClient c(s.port());  // IPv4 to a "::" listener
    ASSERT_TRUE(c.Send(Get("/hello")));
    ParsedResponse r;
    ASSERT_TRUE(c.ReadResponse(&r));
    EXPECT_EQ(r.status, 200);
  }
  s.Stop();
  t.join();
}

}  // namespace
}  // namespace gpumon::http
