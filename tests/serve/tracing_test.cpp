// Tracing end to end over real HTTP on loopback, on the CPU device, with a tiny model and a loopback OTLP collector:
// a request's server span continues its traceparent's trace (its parent the caller's span), with a child span per
// stage it went through; a request without a traceparent, or with a malformed one, starts a trace of its own; the
// access log's JSON lines carry the trace ids; a full export queue drops spans and /metrics counts them.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "serve/otlp_collector.hpp"
#include "serve/routes_fixture.hpp"
#include "testing/scratch_directory.hpp"

namespace accel::serve {
namespace {

using accel::testing::attribute;
using accel::testing::OtlpCollector;

constexpr const char* kTraceId = "0af7651916cd43dd8448eb211c80319c";
constexpr const char* kCallerSpan = "b7ad6b7169203331";
const std::string kTraceparent = std::string("00-") + kTraceId + "-" + kCallerSpan + "-01";

class TracingTest : public RoutesTest {
 protected:
  std::pair<int, json> post_traced(const std::string& path, const json& body, const std::string& traceparent) const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(60, 0);
    httplib::Headers headers;
    if (!traceparent.empty()) headers.emplace("traceparent", traceparent);
    httplib::Result result = client.Post(path, headers, body.dump(), "application/json");
    if (!result) return {-1, json()};
    return {result->status, json::parse(result->body, nullptr, false)};
  }

  static std::vector<json> read_lines(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);) {
      lines.push_back(json::parse(line, nullptr, false));
      EXPECT_FALSE(lines.back().is_discarded()) << line;
    }
    return lines;
  }
};

// The server spans (kind 2) of `spans`.
std::vector<json> server_spans(const std::vector<json>& spans) {
  std::vector<json> out;
  std::copy_if(spans.begin(), spans.end(), std::back_inserter(out), [](const json& s) { return s["kind"] == 2; });
  return out;
}

const json& server_span_named(const std::vector<json>& servers, const std::string& name, std::size_t nth = 0) {
  static const json none;
  for (const json& span : servers)
    if (span["name"] == name && nth-- == 0) return span;
  ADD_FAILURE() << "no server span " << name;
  return none;
}

std::uint64_t nanos(const json& time) { return std::stoull(time.get<std::string>()); }

TEST_F(TracingTest, ARequestsSpansContinueItsTraceparentWithAChildPerStage) {
  OtlpCollector collector;
  const accel::testing::ScratchDirectory dir("tracing");
  const std::filesystem::path log = dir.path() / "access.jsonl";
  serve("bert_mean_dense_norm", {.access_log = log.string(),
                                 .tracing = {.otlp_endpoint = collector.endpoint(),
                                             .service_name = "test-service",
                                             .export_interval = std::chrono::milliseconds(20)}});
  auto [status, body] = post_traced("/v1/embeddings", {{"input", {"hello world", "a cat"}}}, kTraceparent);
  ASSERT_EQ(status, 200) << body;
  const std::int64_t usage = body["usage"]["prompt_tokens"];
  ASSERT_EQ(post_traced("/embed", {{"inputs", "no header"}}, "").first, 200);
  // Uppercase hex: not a traceparent; the request starts a trace of its own.
  std::string upper = kTraceparent;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  ASSERT_EQ(post_traced("/embed", {{"inputs", "bad header"}}, upper).first, 200);
  ASSERT_EQ(post_traced("/nowhere", json::object(), kTraceparent).first, 404);
  const std::string text = metrics_with({"accel_serve_trace_spans_dropped_total 0"});
  EXPECT_NE(text.find("\naccel_serve_trace_spans_dropped_total 0\n"), std::string::npos) << text;
  server_->stop();  // sends every span queued

  for (const json& body : collector.bodies())
    EXPECT_EQ(attribute(body["resourceSpans"][0]["resource"], "service.name")["stringValue"], "test-service");
  const std::vector<json> spans = collector.spans();
  const std::vector<json> servers = server_spans(spans);

  // The traced request: its trace and the caller's span as its parent, named by its route, with its attributes.
  const json& traced = server_span_named(servers, "POST /v1/embeddings");
  EXPECT_EQ(traced["traceId"], kTraceId);
  EXPECT_EQ(traced["parentSpanId"], kCallerSpan);
  EXPECT_EQ(attribute(traced, "http.request.method")["stringValue"], "POST");
  EXPECT_EQ(attribute(traced, "http.route")["stringValue"], "/v1/embeddings");
  EXPECT_EQ(attribute(traced, "http.response.status_code")["intValue"], "200");
  EXPECT_EQ(attribute(traced, "accel.model")["stringValue"], "bert_mean_dense_norm");
  EXPECT_EQ(attribute(traced, "accel.inputs")["intValue"], "2");
  EXPECT_EQ(attribute(traced, "accel.tokens")["intValue"], std::to_string(usage));
  EXPECT_EQ(traced["status"], json::object());
  EXPECT_LE(nanos(traced["startTimeUnixNano"]), nanos(traced["endTimeUnixNano"]));

  // Its children: one per stage, in its trace, each within it.
  std::multiset<std::string> stages;
  std::set<std::string> ids{traced["spanId"]};
  for (const json& span : spans) {
    if (span.value("parentSpanId", "") != traced["spanId"]) continue;
    stages.insert(span["name"].get<std::string>());
    ids.insert(span["spanId"].get<std::string>());
    EXPECT_EQ(span["traceId"], kTraceId);
    EXPECT_EQ(span["kind"], 1);
    EXPECT_GE(nanos(span["startTimeUnixNano"]), nanos(traced["startTimeUnixNano"])) << span;
    EXPECT_LE(nanos(span["startTimeUnixNano"]), nanos(span["endTimeUnixNano"])) << span;
    EXPECT_LE(nanos(span["endTimeUnixNano"]), nanos(traced["endTimeUnixNano"])) << span;
  }
  EXPECT_EQ(stages, (std::multiset<std::string>{"tokenize", "queue", "compute", "serialize"}));
  EXPECT_EQ(ids.size(), 5u);  // every span id its own

  // Without a traceparent, and with a malformed one: new traces, roots, each its own.
  const json& plain = server_span_named(servers, "POST /embed", 0);
  const json& malformed = server_span_named(servers, "POST /embed", 1);
  for (const json* span : {&plain, &malformed}) {
    EXPECT_FALSE(span->contains("parentSpanId")) << *span;
    EXPECT_EQ((*span)["traceId"].get<std::string>().size(), 32u);
    EXPECT_NE((*span)["traceId"], kTraceId);
  }
  EXPECT_NE(plain["traceId"], malformed["traceId"]);

  // A path no route owns: named by its method alone, no route, no model; it still continues the caller's trace.
  const json& unknown = server_span_named(servers, "POST");
  EXPECT_EQ(unknown["traceId"], kTraceId);
  EXPECT_TRUE(attribute(unknown, "http.route").is_null());
  EXPECT_TRUE(attribute(unknown, "accel.model").is_null());
  EXPECT_EQ(attribute(unknown, "http.response.status_code")["intValue"], "404");

  // The access log: JSON lines with the trace id of each request's spans.
  std::map<std::string, std::vector<std::string>> logged;  // route -> trace ids
  for (const json& line : read_lines(log)) logged[line["route"]].push_back(line["trace_id"]);
  EXPECT_EQ(logged["/v1/embeddings"], std::vector<std::string>{kTraceId});
  EXPECT_EQ(logged["other"], std::vector<std::string>{kTraceId});
  std::vector<std::string> embed_traces = logged["/embed"];
  std::vector<std::string> embed_spans{plain["traceId"], malformed["traceId"]};
  std::sort(embed_traces.begin(), embed_traces.end());
  std::sort(embed_spans.begin(), embed_spans.end());
  EXPECT_EQ(embed_traces, embed_spans);
}

TEST_F(TracingTest, AFullExportQueueDropsARequestsSpansAndMetricsCountThem) {
  OtlpCollector collector;
  // Room for fewer spans than one request makes: every request's are dropped, all of them.
  serve("bert_mean_dense_norm", {.tracing = {.otlp_endpoint = collector.endpoint(), .max_queue_spans = 3}});
  ASSERT_EQ(post_traced("/embed", {{"inputs", "dropped"}}, kTraceparent).first, 200);
  // The server span and tokenize, queue, compute and serialize.
  const std::string text = metrics_with({"accel_serve_trace_spans_dropped_total 5"});
  EXPECT_NE(text.find("\naccel_serve_trace_spans_dropped_total 5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\naccel_serve_trace_export_failures_total 0\n"), std::string::npos) << text;
  server_->stop();
  // The /metrics requests' own spans (one each) fit and were sent; none of the /embed request's.
  for (const json& span : collector.spans()) EXPECT_NE(span["name"], "POST /embed") << span;
}

TEST_F(TracingTest, WithoutTracingTheAccessLogCarriesAValidTraceparentsTraceIdOnly) {
  const accel::testing::ScratchDirectory dir("tracing-off");
  const std::filesystem::path log = dir.path() / "access.jsonl";
  serve("bert_mean_dense_norm", {.access_log = log.string()});
  ASSERT_EQ(post_traced("/embed", {{"inputs", "traced"}}, kTraceparent).first, 200);
  ASSERT_EQ(post_traced("/embed", {{"inputs", "untraced"}}, "").first, 200);
  ASSERT_EQ(
      post_traced("/embed", {{"inputs", "malformed"}}, "00-" + std::string(32, '0') + "-" + kCallerSpan + "-01").first,
      200);
  const std::string text = metrics_with({});
  EXPECT_EQ(text.find("accel_serve_trace_"), std::string::npos);  // no tracing, no tracing metrics
  server_->stop();
  std::multiset<std::string> traces;
  for (const json& line : read_lines(log))
    if (line["route"] == "/embed") traces.insert(line["trace_id"].get<std::string>());
  EXPECT_EQ(traces, (std::multiset<std::string>{kTraceId, "", ""}));
}

TEST_F(TracingTest, AnOtlpEndpointThatIsNotHttpStopsTheStartNamingIt) {
  EmbeddingServer server({.port = 0, .tracing = {.otlp_endpoint = "grpc://collector:4317"}});
  Result<int> port = server.start();
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("--otlp-endpoint"), std::string::npos) << port.status().to_string();
}

}  // namespace
}  // namespace accel::serve
