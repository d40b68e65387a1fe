// An in-process HTTP server for the LLM backend tests: real sockets, real HTTP, scripted replies.
//
// A test queues the replies the server gives, in order (status, body, headers, an optional stall
// before answering), points a backend at BaseUrl(), and afterwards reads every request the server
// received (method, path, headers, body). When the queue is empty the server answers 500 with
// "fake server: no scripted reply left", so a test that sends more than it expects fails loudly.
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/json_io.h"

namespace kernelpro::llm::testing {

struct ScriptedReply {
  int status = 200;
  std::string body;
  std::multimap<std::string, std::string> headers;
  std::chrono::milliseconds stall{0};  // sleep this long before answering (timeouts)
  std::string content_type = "application/json";

  static ScriptedReply Json(const kernelpro::Json& body, int status = 200) {
    ScriptedReply r;
    r.status = status;
    r.body = body.dump();
    return r;
  }
};

struct ReceivedRequest {
  std::string method, path, body;  // path as the server decoded it ("/model/a:0/converse")
  std::multimap<std::string, std::string> headers;
  std::string target;  // the request target as sent, query included ("/model/a%3A0/converse")
  std::string Header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
      if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    }
    return "";
  }
  kernelpro::Json JsonBody() const { return kernelpro::Json::parse(body, nullptr, false); }
};

class FakeServer {
 public:
  FakeServer() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      ScriptedReply reply;
      {
        std::lock_guard<std::mutex> lock(mu_);
        received_.push_back(
            {req.method, req.path, req.body, {req.headers.begin(), req.headers.end()}, req.target});
        if (replies_.empty()) {
          reply.status = 500;
          reply.body = R"({"error": {"message": "fake server: no scripted reply left"}})";
        } else {
          reply = replies_.front();
          replies_.pop_front();
        }
      }
      if (reply.stall.count() > 0) std::this_thread::sleep_for(reply.stall);
      res.status = reply.status;
      for (const auto& [k, v] : reply.headers) res.set_header(k, v);
      res.set_content(reply.body, reply.content_type.c_str());
    };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeServer() {
    server_.stop();
    thread_.join();
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Reply(ScriptedReply reply) {
    std::lock_guard<std::mutex> lock(mu_);
    replies_.push_back(std::move(reply));
  }
  void ReplyJson(const kernelpro::Json& body, int status = 200) {
    Reply(ScriptedReply::Json(body, status));
  }
  std::vector<ReceivedRequest> Received() const {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::deque<ScriptedReply> replies_;
  std::vector<ReceivedRequest> received_;
};

// A port nothing listens on: bound to get a free number, closed without listening, so a connect
// is refused at once.
inline int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace kernelpro::llm::testing
